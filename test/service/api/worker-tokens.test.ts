// Per-worker tokens of the internal worker API, against the real service (SQLite + files, and
// PostgreSQL + BullMQ + S3 in the scale project): a token answers only for the jobs of tasks its
// worker holds a lease on, and what a worker writes into a job's internal state is checked (storage
// keys under the job's prefix). The CLI's tokens are in worker-tokens-cli.test.ts, the worker API's
// own budget and listener in worker-api-budget.test.ts.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RemoteTaskQueue } from '../../../service/worker-api/remote-queue.js';
import { jobOutputPrefix } from '../../../service/domain/output-keys.js';
import { createJob } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { expectNotFound, WorkerTokenHarness } from './worker-token-harness.js';

const h = new WorkerTokenHarness();

describe("scoped to the worker's leases", () => {
  it('answers a worker for the job of its lease, and for any other job as if it did not exist', async () => {
    const w1 = await h.newWorker();
    const w2 = await h.newWorker();
    const mine = (await createJob(h.call)).id;
    const other = (await createJob(api(h.svc.baseUrl, await h.svc.createApiKey(`ws-${randomUUID()}`)))).id;
    await h.lease(w1.name, mine);
    await h.lease(w2.name, other);

    expect((await h.internal(w1.token, 'GET', '/workers/me')).body).toEqual({ name: w1.name });
    expect((await h.internal(w1.token, 'GET', `/jobs/${mine}`)).status).toBe(200);
    const moved = await h.internal(w1.token, 'POST', `/jobs/${mine}/transition`, {
      from: ['created'],
      to: 'validating',
    });
    expect(moved.status).toBe(200);
    expect((moved.body as { data: { job: { status: string } } }).data.job.status).toBe('validating');

    // Another worker's job (in another workspace), and a job that does not exist: one answer.
    for (const id of [other, randomUUID()]) {
      expectNotFound(await h.internal(w1.token, 'GET', `/jobs/${id}`));
      expectNotFound(
        await h.internal(w1.token, 'POST', `/jobs/${id}/transition`, { from: ['created'], to: 'validating' }),
      );
      expectNotFound(await h.internal(w1.token, 'POST', `/jobs/${id}/update`, { patch: { normalizedSeconds: 99 } }));
      expectNotFound(await h.internal(w1.token, 'POST', `/jobs/${id}/completed`));
    }
    // Nothing happened to the other worker's job.
    const seen = await h.internal(w2.token, 'GET', `/jobs/${other}`);
    const otherJob = (seen.body as { job: { status: string; normalizedSeconds?: number } }).job;
    expect(otherJob.status).toBe('created');
    expect(otherJob.normalizedSeconds).not.toBe(99);
    // Once the worker holds no task of it any more, the job is closed to it again.
    await h.svc.service.ports.queue.cancelJob(mine);
    expectNotFound(await h.internal(w1.token, 'GET', `/jobs/${mine}`));
  });

  it('still opens an ended job whose task the worker ran (cleanup after a cancel), but moves it nowhere', async () => {
    const w = await h.newWorker();
    const id = (await createJob(h.call)).id;
    await h.lease(w.name, id);
    expect((await h.call('POST', `/jobs/${id}/cancel`)).status).toBe(200);
    expect((await h.internal(w.token, 'GET', `/jobs/${id}`)).status).toBe(200);
    const kept = new Date(Date.now() + 86_400_000).toISOString();
    const updated = await h.internal(w.token, 'POST', `/jobs/${id}/update`, {
      patch: {},
      internal: { keptUntil: kept },
    });
    expect(updated.status).toBe(200);
    expect(
      (await h.internal(w.token, 'POST', `/jobs/${id}/transition`, { from: ['canceled'], to: 'validating' })).status,
    ).toBe(400);
  });

  it('reads the job a held job was requeued from only through `via`, and no other', async () => {
    const w = await h.newWorker();
    const [source, requeued, unrelated] = [
      (await createJob(h.call)).id,
      (await createJob(h.call)).id,
      (await createJob(h.call)).id,
    ];
    await h.svc.service.ports.jobs.update(
      requeued,
      {},
      { requeue: { fromJobId: source, requestedConfig: null, rerender: null } },
    );
    await h.lease(w.name, requeued);
    expectNotFound(await h.internal(w.token, 'GET', `/jobs/${source}`));
    expect((await h.internal(w.token, 'GET', `/jobs/${source}?via=${requeued}`)).status).toBe(200);
    expectNotFound(await h.internal(w.token, 'GET', `/jobs/${unrelated}?via=${requeued}`));
    expectNotFound(await h.internal(w.token, 'GET', `/jobs/${source}?via=${unrelated}`));
  });

  it("takes heartbeats only under the token's own name", async () => {
    const w = await h.newWorker();
    const report = (id: string) => ({
      id,
      name: id.split(':')[0],
      hostname: 'render-1',
      version: '1.0.0',
      startedAt: new Date().toISOString(),
      state: 'running',
      heartbeatIntervalMs: 5000,
      slots: [],
      builds: [],
      gpus: [],
      blocklistedBy: [],
    });
    expect((await h.internal(w.token, 'POST', '/workers/heartbeat', report(`${w.name}:1`))).status).toBe(204);
    const r = await h.internal(w.token, 'POST', '/workers/heartbeat', report(`other-${w.name}:1`));
    expect(r.status).toBe(403);
    expect(errorBody(r)).toMatchObject({
      name: 'WORKER_ID_MISMATCH',
      details: [{ path: ['body', 'id'], message: `must start with "${w.name}:"` }],
    });
  });
});

describe('the task queue through the worker API', () => {
  it("leases, extends and ends tasks only under the token's own lease ids, and touches only its jobs", async () => {
    const w1 = await h.newWorker();
    const w2 = await h.newWorker();
    const q1 = new RemoteTaskQueue({ serviceUrls: [h.svc.origin], token: w1.token, retryDelayMs: 50 });
    const q2 = new RemoteTaskQueue({ serviceUrls: [h.svc.origin], token: w2.token, retryDelayMs: 50 });
    const id = (await createJob(h.call)).id;
    const other = (await createJob(h.call)).id;
    await h.svc.service.ports.queue.enqueue({ id: `validate:${id}`, jobId: id, kind: 'validate' });

    const wrong = await h.internal(w1.token, 'POST', '/tasks/claim', {
      workerId: `${w2.name}:1:control`,
      kinds: ['validate'],
      leaseMs: 60_000,
    });
    expect(wrong.status).toBe(403);
    expect(errorBody(wrong)).toMatchObject({ name: 'WORKER_ID_MISMATCH', details: [{ path: ['body', 'workerId'] }] });

    const mine = `${w1.name}:1:control`;
    const task = await q1.claim(mine, ['validate'], 60_000);
    expect(task).toMatchObject({ id: `validate:${id}`, jobId: id, kind: 'validate', attempts: 1 });
    expect(await q1.extendLease(task!.id, mine, 60_000)).toBe(true);
    // Another worker cannot keep or end the lease: under its own ids the queue does not know it.
    expect(await q2.extendLease(task!.id, `${w2.name}:1:control`, 60_000)).toBe(false);
    await q2.complete(task!.id, `${w2.name}:1:control`);
    expect((await h.svc.service.ports.queue.jobTasks(id)).map((t) => t.state)).toEqual(['running']);
    // Nor add tasks to, cancel or blocklist a job it holds no task of.
    await expect(q2.enqueue({ id: `render:${id}`, jobId: id, kind: 'render' })).rejects.toThrow(/404 JOB_NOT_FOUND/);
    await expect(q2.cancelJob(id)).rejects.toThrow(/404 JOB_NOT_FOUND/);
    await expect(q2.recordFailure(id, `${w2.name}/control`)).rejects.toThrow(/404 JOB_NOT_FOUND/);
    await expect(q1.enqueue({ id: `render:${other}`, jobId: other, kind: 'render' })).rejects.toThrow(
      /404 JOB_NOT_FOUND/,
    );
    await expect(q1.recordFailure(id, `${w2.name}/control`)).rejects.toThrow(/403 WORKER_ID_MISMATCH/);

    // Its own job: it may add the next task, count a failure of its own slot, and end its lease.
    await q1.enqueue({ id: `render:${id}`, jobId: id, kind: 'render', payload: { note: 1 } });
    expect(await q1.recordFailure(id, `${w1.name}/control`)).toBe(1);
    expect(await q1.jobFailures(id)).toEqual({ [`${w1.name}/control`]: 1 });
    await q1.complete(task!.id, mine);
    expect((await h.svc.service.ports.queue.jobTasks(id)).map((t) => [t.kind, t.state])).toEqual([
      ['validate', 'done'],
      ['render', 'queued'],
    ]);
    expect((await q1.counts()).queued).toBeGreaterThanOrEqual(1);
  });
});

describe('internal state a worker writes', () => {
  it("refuses output keys outside the job's own prefix with 400, and stores keys inside it", async () => {
    const w = await h.newWorker();
    const id = (await createJob(h.call)).id;
    const victim = (await createJob(h.call)).id;
    await h.lease(w.name, id);
    const prefix = jobOutputPrefix(h.svc.workspaceId, id);
    const file = (key: string) => ({ key, fileName: 'f.png', view: null, outputType: 'frame', size: 1 });
    const outputs = (key: string) => ({
      frames: [file(key)],
      composites: [],
      framesZipKey: null,
      compositesZipKey: null,
      videos: [],
    });
    for (const forged of [
      `${jobOutputPrefix(h.svc.workspaceId, victim)}/frames/0001.png`,
      `uploads/x/scene.blend`,
      `${prefix}/../${victim}/frames/0001.png`,
      `${prefix}x/frames/1.png`,
    ]) {
      const r = await h.internal(w.token, 'POST', `/jobs/${id}/update`, {
        patch: {},
        internal: { outputs: outputs(forged) },
      });
      expect(r.status, forged).toBe(400);
      expect(errorBody(r)).toMatchObject({
        name: 'VALIDATION_ERROR',
        details: [{ code: 'key_outside_job', path: ['body', 'internal', 'outputs', 'frames', '0', 'key'] }],
      });
    }
    const preview = await h.internal(w.token, 'POST', `/jobs/${id}/update`, {
      patch: {},
      internal: { previewKey: 'outputs/elsewhere/preview.jpg' },
    });
    expect(preview.status).toBe(400);
    // Fields only the service sets, and fields JobInternal does not have.
    for (const extra of [
      { sourceKey: 'uploads/other/scene.blend' },
      { requeue: { fromJobId: victim, requestedConfig: null, rerender: null } },
      { anything: 1 },
    ]) {
      const r = await h.internal(w.token, 'POST', `/jobs/${id}/update`, { patch: {}, internal: extra });
      expect(r.status, JSON.stringify(extra)).toBe(400);
      expect(errorBody(r).name).toBe('VALIDATION_ERROR');
    }
    expect((await h.svc.service.ports.jobs.getById(id))?.internal.outputs).toBeUndefined();

    const good = await h.internal(w.token, 'POST', `/jobs/${id}/update`, {
      patch: {},
      internal: { outputs: outputs(`${prefix}/frames/0001.png`), previewKey: `${prefix}/preview.jpg` },
    });
    expect(good.status).toBe(200);
    expect((await h.svc.service.ports.jobs.getById(id))?.internal.outputs?.frames[0]?.key).toBe(
      `${prefix}/frames/0001.png`,
    );
  });
});
