// Per-worker tokens of the internal worker API, against the real service (SQLite + files, and
// PostgreSQL + BullMQ + S3 in the scale project): a token answers only for the jobs of tasks its
// worker holds a lease on, a revoke made with the CLI is refused at the next call, and what a
// worker writes into a job's internal state is checked (storage keys under the job's prefix).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerToken } from '../../../service/domain/worker-tokens.js';
import { WORKER_API_PREFIX } from '../../../service/worker-api/contract.js';
import { RemoteTaskQueue } from '../../../service/worker-api/remote-queue.js';
import { jobOutputPrefix } from '../../../service/domain/output-keys.js';
import { runCli } from '../../helpers/cli-run.js';
import { createJob, type Call } from '../../helpers/flow.js';
import { api, errorBody, type Answer } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

let svc: TestService;
let call: Call;

beforeAll(async () => {
  svc = await startTestService({ rateLimitMax: 10_000 });
  call = api(svc.baseUrl, svc.apiKey);
});
afterAll(async () => {
  await svc?.close();
});

/** A raw call to the worker API, as any HTTP client would make it. */
async function internal(
  token: string,
  method: string,
  route: string,
  body?: unknown,
  origin = svc.origin,
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${origin}${WORKER_API_PREFIX}${route}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as unknown) : undefined };
}

async function newWorker(): Promise<{ name: string; token: string }> {
  const name = `w-${randomUUID().slice(0, 8)}`;
  return { name, token: (await createWorkerToken(svc.service.ports.workerTokens, name)).token };
}

/** Leases a task of `jobId` to the worker `name`, as `renderbridge worker` claims one (lease id `name:pid:lane`). */
async function lease(name: string, jobId: string): Promise<string> {
  const queue = svc.service.ports.queue;
  const id = `finalize:${jobId}`;
  await queue.enqueue({ id, jobId, kind: 'finalize' });
  const workerId = `${name}:4242:control`;
  const task = await queue.claim(workerId, ['finalize'], 60_000);
  expect(task?.id, 'the test claims the task it just enqueued').toBe(id);
  return workerId;
}

/** The answer for a job this worker may not see: the same for another workspace's job, another worker's and none. */
function expectNotFound(r: Answer): void {
  expect(r.status).toBe(404);
  expect(errorBody(r)).toMatchObject({
    name: 'JOB_NOT_FOUND',
    message: expect.stringMatching(/among the jobs this worker holds a task of/),
  });
}

describe("scoped to the worker's leases", () => {
  it('answers a worker for the job of its lease, and for any other job as if it did not exist', async () => {
    const w1 = await newWorker();
    const w2 = await newWorker();
    const mine = (await createJob(call)).id;
    const other = (await createJob(api(svc.baseUrl, await svc.createApiKey(`ws-${randomUUID()}`)))).id;
    await lease(w1.name, mine);
    await lease(w2.name, other);

    expect((await internal(w1.token, 'GET', '/workers/me')).body).toEqual({ name: w1.name });
    expect((await internal(w1.token, 'GET', `/jobs/${mine}`)).status).toBe(200);
    const moved = await internal(w1.token, 'POST', `/jobs/${mine}/transition`, { from: ['created'], to: 'validating' });
    expect(moved.status).toBe(200);
    expect((moved.body as { data: { job: { status: string } } }).data.job.status).toBe('validating');

    // Another worker's job (in another workspace), and a job that does not exist: one answer.
    for (const id of [other, randomUUID()]) {
      expectNotFound(await internal(w1.token, 'GET', `/jobs/${id}`));
      expectNotFound(
        await internal(w1.token, 'POST', `/jobs/${id}/transition`, { from: ['created'], to: 'validating' }),
      );
      expectNotFound(await internal(w1.token, 'POST', `/jobs/${id}/update`, { patch: { normalizedSeconds: 99 } }));
      expectNotFound(await internal(w1.token, 'POST', `/jobs/${id}/completed`));
    }
    // Nothing happened to the other worker's job.
    const seen = await internal(w2.token, 'GET', `/jobs/${other}`);
    const otherJob = (seen.body as { job: { status: string; normalizedSeconds?: number } }).job;
    expect(otherJob.status).toBe('created');
    expect(otherJob.normalizedSeconds).not.toBe(99);
    // Once the worker holds no task of it any more, the job is closed to it again.
    await svc.service.ports.queue.cancelJob(mine);
    expectNotFound(await internal(w1.token, 'GET', `/jobs/${mine}`));
  });

  it('still opens an ended job whose task the worker ran (cleanup after a cancel), but moves it nowhere', async () => {
    const w = await newWorker();
    const id = (await createJob(call)).id;
    await lease(w.name, id);
    expect((await call('POST', `/jobs/${id}/cancel`)).status).toBe(200);
    expect((await internal(w.token, 'GET', `/jobs/${id}`)).status).toBe(200);
    const kept = new Date(Date.now() + 86_400_000).toISOString();
    const updated = await internal(w.token, 'POST', `/jobs/${id}/update`, { patch: {}, internal: { keptUntil: kept } });
    expect(updated.status).toBe(200);
    expect(
      (await internal(w.token, 'POST', `/jobs/${id}/transition`, { from: ['canceled'], to: 'validating' })).status,
    ).toBe(400);
  });

  it('reads the job a held job was requeued from only through `via`, and no other', async () => {
    const w = await newWorker();
    const [source, requeued, unrelated] = [
      (await createJob(call)).id,
      (await createJob(call)).id,
      (await createJob(call)).id,
    ];
    await svc.service.ports.jobs.update(
      requeued,
      {},
      { requeue: { fromJobId: source, requestedConfig: null, rerender: null } },
    );
    await lease(w.name, requeued);
    expectNotFound(await internal(w.token, 'GET', `/jobs/${source}`));
    expect((await internal(w.token, 'GET', `/jobs/${source}?via=${requeued}`)).status).toBe(200);
    expectNotFound(await internal(w.token, 'GET', `/jobs/${unrelated}?via=${requeued}`));
    expectNotFound(await internal(w.token, 'GET', `/jobs/${source}?via=${unrelated}`));
  });

  it("takes heartbeats only under the token's own name", async () => {
    const w = await newWorker();
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
    expect((await internal(w.token, 'POST', '/workers/heartbeat', report(`${w.name}:1`))).status).toBe(204);
    const r = await internal(w.token, 'POST', '/workers/heartbeat', report(`other-${w.name}:1`));
    expect(r.status).toBe(403);
    expect(errorBody(r)).toMatchObject({
      name: 'WORKER_ID_MISMATCH',
      details: [{ path: ['body', 'id'], message: `must start with "${w.name}:"` }],
    });
  });
});

describe('the task queue through the worker API', () => {
  it("leases, extends and ends tasks only under the token's own lease ids, and touches only its jobs", async () => {
    const w1 = await newWorker();
    const w2 = await newWorker();
    const q1 = new RemoteTaskQueue({ serviceUrls: [svc.origin], token: w1.token, retryDelayMs: 50 });
    const q2 = new RemoteTaskQueue({ serviceUrls: [svc.origin], token: w2.token, retryDelayMs: 50 });
    const id = (await createJob(call)).id;
    const other = (await createJob(call)).id;
    await svc.service.ports.queue.enqueue({ id: `validate:${id}`, jobId: id, kind: 'validate' });

    const wrong = await internal(w1.token, 'POST', '/tasks/claim', {
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
    expect((await svc.service.ports.queue.jobTasks(id)).map((t) => t.state)).toEqual(['running']);
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
    expect((await svc.service.ports.queue.jobTasks(id)).map((t) => [t.kind, t.state])).toEqual([
      ['validate', 'done'],
      ['render', 'queued'],
    ]);
    expect((await q1.counts()).queued).toBeGreaterThanOrEqual(1);
  });
});

describe('internal state a worker writes', () => {
  it("refuses output keys outside the job's own prefix with 400, and stores keys inside it", async () => {
    const w = await newWorker();
    const id = (await createJob(call)).id;
    const victim = (await createJob(call)).id;
    await lease(w.name, id);
    const prefix = jobOutputPrefix(svc.workspaceId, id);
    const file = (key: string) => ({ key, fileName: 'f.png', view: null, outputType: 'frame', size: 1 });
    const outputs = (key: string) => ({
      frames: [file(key)],
      composites: [],
      framesZipKey: null,
      compositesZipKey: null,
      videos: [],
    });
    for (const forged of [
      `${jobOutputPrefix(svc.workspaceId, victim)}/frames/0001.png`,
      `uploads/x/scene.blend`,
      `${prefix}/../${victim}/frames/0001.png`,
      `${prefix}x/frames/1.png`,
    ]) {
      const r = await internal(w.token, 'POST', `/jobs/${id}/update`, {
        patch: {},
        internal: { outputs: outputs(forged) },
      });
      expect(r.status, forged).toBe(400);
      expect(errorBody(r)).toMatchObject({
        name: 'VALIDATION_ERROR',
        details: [{ code: 'key_outside_job', path: ['body', 'internal', 'outputs', 'frames', '0', 'key'] }],
      });
    }
    const preview = await internal(w.token, 'POST', `/jobs/${id}/update`, {
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
      const r = await internal(w.token, 'POST', `/jobs/${id}/update`, { patch: {}, internal: extra });
      expect(r.status, JSON.stringify(extra)).toBe(400);
      expect(errorBody(r).name).toBe('VALIDATION_ERROR');
    }
    expect((await svc.service.ports.jobs.getById(id))?.internal.outputs).toBeUndefined();

    const good = await internal(w.token, 'POST', `/jobs/${id}/update`, {
      patch: {},
      internal: { outputs: outputs(`${prefix}/frames/0001.png`), previewKey: `${prefix}/preview.jpg` },
    });
    expect(good.status).toBe(200);
    expect((await svc.service.ports.jobs.getById(id))?.internal.outputs?.frames[0]?.key).toBe(
      `${prefix}/frames/0001.png`,
    );
  });
});

describe('renderbridge admin worker tokens', () => {
  it('creates, lists and revokes a token; the revoked token is refused at its next call', async () => {
    const state = svc.config.databaseUrl ? ['--database-url', svc.config.databaseUrl] : ['--data-dir', svc.dataDir];
    const name = `cli-${randomUUID().slice(0, 8)}`;
    const created = await runCli(['admin', 'create-worker-token', '--name', name, ...state], {});
    expect(created.code, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^rbw_/);
    expect(created.stderr).toContain(`for worker "${name}"`);

    const again = await runCli(['admin', 'create-worker-token', '--name', name, ...state], {});
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(`an active worker token named "${name}" exists`);

    const id = (await createJob(call)).id;
    await lease(name, id);
    expect((await internal(token, 'GET', `/jobs/${id}`)).status).toBe(200);

    const listed = await runCli(['admin', 'list-worker-tokens', ...state], {});
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`${token.slice(0, 8)}….*${name}.*last used 20.*active`));
    expect(listed.stdout).not.toContain(token.slice(8));

    const revoked = await runCli(['admin', 'revoke-worker-token', name, ...state], {});
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`of worker "${name}"`);
    const refused = await internal(token, 'GET', `/jobs/${id}`);
    expect(refused.status).toBe(401);
    expect(errorBody(refused)).toMatchObject({
      name: 'UNAUTHORIZED',
      message: expect.stringMatching(/revoked worker token/),
    });
    expect((await runCli(['admin', 'revoke-worker-token', name, ...state], {})).stderr).toContain(
      `no active worker token with id or name "${name}"`,
    );
    // Five CLI processes, each a few seconds to start on a loaded 2-core machine.
  }, 180_000);
});

describe('renderbridge worker with a per-worker token', () => {
  it("runs under its token's name, and refuses a --name that says otherwise", async () => {
    const { name, token } = await newWorker();
    const env = { RENDERBRIDGE_WORKER_TOKEN: token, AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' };
    const args = [
      'worker',
      '--service-url',
      svc.origin,
      '--s3-bucket',
      'b',
      '--s3-endpoint',
      'http://127.0.0.1:9',
      '--workers',
      '1',
    ];
    const r = await runCli([...args, '--name', 'someone-else'], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      `this worker's token belongs to worker "${name}", but --name (or RENDERBRIDGE_WORKER_NAME) says "someone-else"`,
    );
    expect(r.stderr).not.toContain(token);
  });
});

describe("the worker API's own budget and listener", () => {
  it('limits each worker token apart from API keys, and can listen on its own address only', async () => {
    const own = await startTestService({ workerApiPort: 0, workerApiRateLimitMax: 3, rateLimitMax: 10_000 });
    try {
      const origin = own.service.workerApiOrigin!;
      expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const { token } = await createWorkerToken(own.service.ports.workerTokens, 'budget-1');
      const other = await createWorkerToken(own.service.ports.workerTokens, 'budget-2');
      // The public listener does not serve the worker API at all.
      const onPublic = await internal(token, 'GET', '/workers/me', undefined, own.origin);
      expect(onPublic.status).toBe(404);
      expect(errorBody(onPublic).name).toBe('ROUTE_NOT_FOUND');

      for (let i = 0; i < 3; i++)
        expect((await internal(token, 'GET', '/workers/me', undefined, origin)).status).toBe(200);
      const limited = await internal(token, 'GET', '/workers/me', undefined, origin);
      expect(limited.status).toBe(429);
      expect(errorBody(limited).name).toBe('RATE_LIMITED');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another worker's budget, and the tenants', are untouched.
      expect((await internal(other.token, 'GET', '/workers/me', undefined, origin)).status).toBe(200);
      expect((await api(own.baseUrl, own.apiKey)('GET', '/jobs')).status).toBe(200);
    } finally {
      await own.close();
    }
  });
});
