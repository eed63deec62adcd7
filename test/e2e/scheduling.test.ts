// The scheduling extension's render side with real Blender, through the public API: preview frames
// render first, the approval gate holds the rest until "go", a job waits for the jobs it depends on
// (across a restart of the service) and fails with DEPENDENCY_FAILED when one is canceled.
import { describe, expect, it } from 'vitest';
import type { JobTask } from '../../shared/api/dashboard.js';
import type { Job } from '../../shared/api/job.js';
import { tinyRender, useE2E, waitUntil } from '../helpers/e2e.js';
import { startTestService } from '../helpers/service.js';
import { RenderJobClient } from '../../shared/client/client.js';

const e2e = useE2E();
const { call, validated } = e2e;

async function chunks(id: string, c = call): Promise<JobTask[]> {
  const { body } = await c<{ data: JobTask[] }>('GET', `/jobs/${id}/tasks`);
  return body.data.filter((t) => t.kind === 'render-chunk');
}

const ended = (client: RenderJobClient, id: string) =>
  client.waitForStatus(id, ['completed', 'failed', 'canceled'], { intervalMs: 150, timeoutMs: 120_000 });

describe('preview frames first', () => {
  it('renders the first, middle and last frames before the others', async () => {
    const id = await validated();
    await e2e.client.renderJob(id, tinyRender('1-9'));
    expect((await ended(e2e.client, id)).status).toBe('completed');
    const job = await e2e.client.getJob(id);
    expect(job.scheduling?.previews).toEqual({ frames: [1, 5, 9], gate: 'none' });
    const started = (await chunks(id)).sort((a, b) => Date.parse(a.startedAt!) - Date.parse(b.startedAt!));
    expect(started.slice(0, 3).map((t) => t.frames)).toEqual([[1], [5], [9]]);
    expect(started.flatMap((t) => t.frames ?? []).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  }, 180_000);

  it('holds the other frames until the previews are approved', async () => {
    const id = await validated();
    await e2e.client.renderJob(id, { ...tinyRender('1-5'), scheduling: { approvePreviews: true } });
    // The previews render; the rest is not even queued.
    await waitUntil('the previews rendered', async () => (await e2e.client.getJobProgress(id)).framesDone === 3);
    const before = await chunks(id);
    expect(before.map((t) => t.frames)).toEqual([[1], [3], [5]]);
    const job = await e2e.client.getJob(id);
    expect(job.status).toBe('rendering');
    expect(job.scheduling?.previews).toEqual({ frames: [1, 3, 5], gate: 'waiting' });
    expect((await call('POST', `/jobs/${id}/approve-previews`)).status).toBe(200);
    expect((await ended(e2e.client, id)).status).toBe('completed');
    expect((await chunks(id)).flatMap((t) => t.frames ?? []).sort()).toEqual([1, 2, 3, 4, 5]);
  }, 180_000);
});

describe('dependsOn', () => {
  it('starts once the job it waits for completed, and shows what it waits for meanwhile', async () => {
    const first = await validated();
    const second = await validated();
    await e2e.client.renderJob(second, { ...tinyRender('1-2'), scheduling: { dependsOn: [first] } });
    const waiting = await e2e.client.getJob(second);
    expect(waiting.status).toBe('booting');
    expect(waiting.scheduling?.waitingFor).toEqual([first]);
    await e2e.client.renderJob(first, tinyRender('1-2'));
    const done: Job = await ended(e2e.client, second);
    expect(done.status).toBe('completed');
    expect(done.scheduling?.waitingFor).toEqual([]);
    const firstDone = Date.parse((await e2e.client.getJob(first)).updatedAt);
    for (const t of await chunks(second)) expect(Date.parse(t.startedAt!)).toBeGreaterThanOrEqual(firstDone);
  }, 180_000);

  it('fails with DEPENDENCY_FAILED, naming the job, when the job it waits for is canceled', async () => {
    const first = await validated();
    const second = await validated();
    await e2e.client.renderJob(second, { ...tinyRender('1'), scheduling: { dependsOn: [first] } });
    await e2e.client.cancelJob(first);
    const failed = await ended(e2e.client, second);
    expect(failed.status).toBe('failed');
    expect(failed.failedReason?.name).toBe('DEPENDENCY_FAILED');
    expect(failed.failedReason?.errorDetails).toMatchObject({ dependencyId: first, dependencyStatus: 'canceled' });
  }, 180_000);

  it('keeps waiting across a restart of the service, then renders', async () => {
    const svc = await startTestService({ workers: 1, worker: { runtime: { heartbeatMs: 200, pollMs: 100 } } });
    let client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
    const first = await validated(client);
    const second = await validated(client);
    await client.renderJob(second, { ...tinyRender('1'), scheduling: { dependsOn: [first] } });
    await svc.stop();
    const again = await startTestService({
      dataDir: svc.dataDir,
      workers: 1,
      worker: { runtime: { heartbeatMs: 200, pollMs: 100 } },
    });
    try {
      // The same workspace's key: keys live in the data folder too.
      client = new RenderJobClient({ baseUrl: again.baseUrl, apiKey: svc.apiKey });
      expect((await client.getJob(second)).scheduling?.waitingFor).toEqual([first]);
      await client.renderJob(first, tinyRender('1'));
      expect((await ended(client, second)).status).toBe('completed');
    } finally {
      await again.close();
    }
  }, 240_000);
});
