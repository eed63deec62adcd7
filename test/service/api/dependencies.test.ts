// dependsOn (extension scheduling) with real Blender on both stacks (SQLite + files, and PostgreSQL +
// BullMQ + S3): a render waits until the job it depends on completed and then renders, woken by that
// job's end rather than by its planning task's safety poll (DEPENDENCY_SAFETY_POLL_MS, 30 s); a
// dependency that fails fails it with DEPENDENCY_FAILED.
import { describe, expect, it } from 'vitest';
import type { JobTask } from '../../../shared/api/dashboard.js';
import { moveJob } from '../../../service/domain/job-lifecycle.js';
import { DEPENDENCY_SAFETY_POLL_MS } from '../../../service/worker/render/dependency-wait.js';
import { tinyRender, useE2E, waitUntil } from '../../helpers/e2e.js';

const e2e = useE2E();
const { call, validated } = e2e;

async function tasks(id: string): Promise<JobTask[]> {
  const { body } = await call<{ data: JobTask[] }>('GET', `/jobs/${id}/tasks`);
  return body.data;
}

/** Renders `second` waiting for `first`, and returns once its planning task looked and went back to wait. */
async function waiting(second: string, first: string): Promise<void> {
  await e2e.client.renderJob(second, { ...tinyRender('1-2'), scheduling: { dependsOn: [first] } });
  await waitUntil('the planning task to look and go back to wait', async () => {
    const plan = (await tasks(second)).find((t) => t.kind === 'render');
    return plan?.state === 'queued' && plan.startedAt !== null;
  });
  const job = await e2e.client.getJob(second);
  expect(job.status).toBe('booting');
  expect(job.scheduling?.waitingFor).toEqual([first]);
}

const ended = (id: string) =>
  e2e.client.waitForStatus(id, ['completed', 'failed', 'canceled'], { intervalMs: 150, timeoutMs: 120_000 });

describe('dependsOn', () => {
  it('renders once the job it waits for completed, woken by its end, not by the safety poll', async () => {
    const first = await validated();
    const second = await validated();
    await waiting(second, first);
    await e2e.client.renderJob(first, tinyRender('1'));
    const done = await ended(second);
    expect(done.status).toBe('completed');
    expect(done.scheduling?.waitingFor).toEqual([]);
    const firstDone = Date.parse((await e2e.client.getJob(first)).updatedAt);
    const runs = await tasks(second);
    const plan = runs.find((t) => t.kind === 'render')!;
    // Planned after the dependency completed, and long before a safety poll would have looked again.
    expect(Date.parse(plan.startedAt!)).toBeGreaterThanOrEqual(firstDone);
    expect(Date.parse(plan.startedAt!) - firstDone).toBeLessThan(DEPENDENCY_SAFETY_POLL_MS / 2);
    const chunks = runs.filter((t) => t.kind === 'render-chunk');
    expect(chunks.flatMap((t) => t.frames ?? []).sort()).toEqual([1, 2]);
    for (const t of chunks) expect(Date.parse(t.startedAt!)).toBeGreaterThanOrEqual(firstDone);
  }, 180_000);

  it('fails with DEPENDENCY_FAILED, naming the job, when the job it waits for failed', async () => {
    const first = await validated();
    const second = await validated();
    await waiting(second, first);
    const failedAt = Date.now();
    // Recorded as a worker records a final failure: the named move on the service's job store.
    const moved = await moveJob(e2e.svc.service.ports.jobs, first, 'fail', {
      failedReason: { name: 'RENDER_FAILED', type: 'RENDER_FAILED', errorDetails: { message: 'test' } },
    });
    expect(moved?.job.status).toBe('failed');
    const failed = await ended(second);
    expect(failed.status).toBe('failed');
    expect(failed.failedReason?.name).toBe('DEPENDENCY_FAILED');
    expect(failed.failedReason?.errorDetails).toMatchObject({ dependencyId: first, dependencyStatus: 'failed' });
    expect(Date.parse(failed.updatedAt) - failedAt).toBeLessThan(DEPENDENCY_SAFETY_POLL_MS / 2);
  }, 180_000);
});
