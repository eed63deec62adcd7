// A task that reaches the worker before its job has moved (the routes enqueue first, then move;
// a worker woken at once by the enqueue can claim the task in between) is run once the job has
// moved, not dropped with the job left waiting for ever. Real worker and Blender.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobTask } from '../../shared/api/dashboard.js';
import { moveJob } from '../../service/domain/job-lifecycle.js';
import { newTasks } from '../../service/domain/tasks.js';
import { buildFixture } from '../helpers/fixtures.js';
import { startE2E, waitUntil, type E2E } from '../helpers/e2e.js';
import { api } from '../helpers/http.js';

let e2e: E2E;

beforeAll(async () => {
  e2e = await startE2E();
}, 120_000);
afterAll(async () => {
  await e2e?.svc.close();
});

describe('a validate task claimed before its job moved to validating', () => {
  it('validates the job once it has moved', async () => {
    const { client, svc } = e2e;
    const target = await client.uploadProject(await buildFixture('basic'));
    const job = await client.createJob({ slug: target.slug });
    await svc.service.ports.queue.enqueue(newTasks.validate(job.id));
    const call = api(svc.baseUrl, svc.apiKey);
    await waitUntil(
      'the worker to claim the task',
      async () => {
        const { body } = await call<{ data: JobTask[] }>('GET', `/jobs/${job.id}/tasks`);
        return body.data.some((t) => t.kind === 'validate' && (t.state === 'running' || t.state === 'done'));
      },
      { timeoutMs: 30_000, intervalMs: 20 },
    );
    expect((await client.getJob(job.id)).status).toBe('created');
    expect(await moveJob(svc.service.ports.jobs, job.id, 'startValidation')).toBeDefined();
    const done = await client.waitForStatus(job.id, ['validated', 'failed'], { intervalMs: 100, timeoutMs: 90_000 });
    expect(done.status).toBe('validated');
  }, 180_000);
});
