// The internal worker API against the real reference service: a worker on another machine reads
// and moves jobs only through it (RemoteWorkerJobs), with failover across service URLs, and a
// real render runs end to end with the worker runtime on RemoteWorkerJobs.
import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../service/config-defaults.js';
import { createWorkerToken } from '../../../service/domain/worker-tokens.js';
import { WorkerApiError } from '../../../service/worker-api/client.js';
import { WORKER_API_PREFIX } from '../../../service/worker-api/contract.js';
import { RemoteWorkerJobs, type RemoteWorkerJobsOptions } from '../../../service/worker-api/remote-jobs.js';
import { RemoteTaskQueue } from '../../../service/worker-api/remote-queue.js';
import { startWorker } from '../../../service/worker/start.js';
import { JobEnvelope, type Job } from '../../../shared/api/job.js';
import type { JobProgress } from '../../../shared/api/progress.js';
import { RenderJobClient } from '../../../shared/client/client.js';
import { API_KEY_PREFIX } from '../../../shared/constants.js';
import { tinyRender, waitUntil } from '../../helpers/e2e.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { createJob, type Call } from '../../helpers/flow.js';
import { api, errorBody, type Answer } from '../../helpers/http.js';
import { pngInfo } from '../../helpers/png.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// Shaped like an API key, so it is the key lookup (not the shape check) that refuses it on the public API.
const TOKEN = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;

let svc: TestService;
let call: Call;
let jobs: RemoteWorkerJobs;
const servers: Server[] = [];
let hookHits = 0;

/** A real HTTP server on a free port, closed after the file. */
async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return `http://127.0.0.1:${port}`;
}

function remote(opts: Partial<RemoteWorkerJobsOptions> = {}): RemoteWorkerJobs {
  return new RemoteWorkerJobs({ serviceUrls: [svc.origin], token: TOKEN, retryDelayMs: 50, ...opts });
}

/** A raw call to the worker API, as any HTTP client would make it. */
async function internal(
  method: string,
  route: string,
  body?: unknown,
  opts: { token?: string | null; raw?: string; origin?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? TOKEN : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const payload = opts.raw ?? (body === undefined ? undefined : JSON.stringify(body));
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${opts.origin ?? svc.origin}${WORKER_API_PREFIX}${route}`, {
    method,
    headers,
    ...(payload !== undefined ? { body: payload } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as unknown) : undefined };
}

async function publicJob(id: string): Promise<Job> {
  const r = await call('GET', `/jobs/${id}`);
  expect(r.status).toBe(200);
  return JobEnvelope.parse(r.body).data;
}

/** A job moved by the remote store through every step to `completed`. */
async function completedJob(): Promise<string> {
  const { id } = await createJob(call);
  const steps: [string, string][] = [
    ['created', 'validating'],
    ['validating', 'validated'],
    ['validated', 'booting'],
    ['booting', 'rendering'],
    ['rendering', 'completed'],
  ];
  for (const [from, to] of steps)
    expect((await jobs.transition(id, [from as never], to as never))?.job.status).toBe(to);
  return id;
}

function progressOf(jobId: string, over: Partial<JobProgress> = {}): JobProgress {
  return {
    jobId,
    status: 'validating',
    framesTotal: 10,
    framesDone: 3,
    framesRendering: 1,
    framesFailed: 0,
    currentFrame: 4,
    currentSample: 2,
    samplesTotal: 8,
    percent: 32.5,
    etaSeconds: 20,
    updatedAt: new Date().toISOString(),
    ...over,
  };
}

beforeAll(async () => {
  svc = await startTestService({ workerToken: TOKEN, rateLimitMax: 10_000 });
  call = api(svc.baseUrl, svc.apiKey);
  jobs = remote();
  const hook = await serve((req, res) => {
    hookHits++;
    req.resume().on('end', () => res.writeHead(200).end('ok'));
  });
  await svc.service.webhooks.setWebhook(svc.workspaceId, {
    url: `${hook}/hook`,
    secret: randomBytes(32).toString('hex'),
  });
});
afterAll(async () => {
  await svc?.close();
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

describe('RemoteWorkerJobs against the service', () => {
  it(
    'reads a job created through the public API and moves it created -> validating -> validated with patches; ' +
      'a stale move returns undefined',
    async () => {
      const { id } = await createJob(call);
      const read = await jobs.getById(id);
      expect(read?.job).toMatchObject({ id, status: 'created', workspaceId: svc.workspaceId });
      expect(read?.internal.sourceKey).toEqual(expect.any(String));
      expect(await jobs.getById(randomUUID())).toBeUndefined();

      const validating = await jobs.transition(
        id,
        ['created'],
        'validating',
        {},
        { validationConfig: { sceneToRender: 'Main' } },
      );
      expect(validating?.job.status).toBe('validating');
      expect(validating?.internal).toMatchObject({
        sourceKey: read?.internal.sourceKey,
        validationConfig: { sceneToRender: 'Main' },
      });
      const rootFolderId = randomUUID();
      const validated = await jobs.transition(id, ['validating'], 'validated', {
        rootFolderId,
        isAnalysisSkipped: true,
      });
      expect(validated?.job).toMatchObject({ status: 'validated', rootFolderId, isAnalysisSkipped: true });
      expect(await publicJob(id)).toMatchObject({ status: 'validated', rootFolderId, isAnalysisSkipped: true });

      expect(await jobs.transition(id, ['created'], 'validating')).toBeUndefined();
      expect(await jobs.transition(randomUUID(), ['created'], 'validating')).toBeUndefined();
      expect((await publicJob(id)).status).toBe('validated');
    },
  );

  it('update and setProgress show up in the public GET /jobs/{id} and its progress', async () => {
    const { id } = await createJob(call);
    const updated = await jobs.update(id, { normalizedSeconds: 12.5 });
    expect(updated?.job.normalizedSeconds).toBe(12.5);
    expect((await publicJob(id)).normalizedSeconds).toBe(12.5);
    expect(await jobs.update(randomUUID(), { normalizedSeconds: 1 })).toBeUndefined();

    await jobs.transition(id, ['created'], 'validating');
    await jobs.setProgress(progressOf(id));
    const r = await call<{ data: JobProgress }>('GET', `/jobs/${id}/progress`);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      jobId: id,
      status: 'validating',
      framesTotal: 10,
      framesDone: 3,
      percent: 32.5,
      etaSeconds: 20,
    });
  });

  it('completed() enqueues exactly one onRenderComplete delivery, however often it is called', async () => {
    const id = await completedJob();
    const rec = await jobs.getById(id);
    await jobs.completed(rec!);
    await jobs.completed(rec!);
    const deliveries = await svc.service.webhooks.listForJob(id);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.event).toMatchObject({
      event: 'onRenderComplete',
      jobId: id,
      status: 'completed',
      workspaceId: svc.workspaceId,
    });
    await waitUntil(
      'the webhook to be delivered',
      async () => (await svc.service.webhooks.getDelivery(deliveries[0]!.id))?.state === 'delivered',
      { timeoutMs: 15_000 },
    );

    // Only a completed job has a completion to report.
    const { id: open } = await createJob(call);
    const refused = await jobs.completed((await jobs.getById(open))!).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WorkerApiError);
    expect((refused as WorkerApiError).status).toBe(400);
    expect(String(refused)).toMatch(/"created", not completed/);
    expect(await svc.service.webhooks.listForJob(open)).toEqual([]);
  });
});

describe('authentication', () => {
  it.each([
    ['no token', null],
    ['a wrong token', `${TOKEN.slice(0, -1)}${TOKEN.endsWith('A') ? 'B' : 'A'}`],
    ['an API key', 'API_KEY'],
  ])('refuses %s with 401 and the error body', async (_n, token) => {
    const id = (await createJob(call)).id;
    for (const [method, route, body] of [
      ['GET', `/jobs/${id}`, undefined],
      ['POST', `/jobs/${id}/transition`, { from: ['created'], to: 'validating' }],
      ['PUT', `/jobs/${id}/progress`, progressOf(id)],
      ['POST', `/jobs/${id}/completed`, undefined],
    ] as const) {
      const r = await internal(method, route, body, { token: token === 'API_KEY' ? svc.apiKey : token });
      expect(r.status, `${method} ${route}`).toBe(401);
      const e = errorBody(r);
      expect(e.name).toBe('UNAUTHORIZED');
      expect(e.message).toMatch(/worker token/);
    }
    expect((await publicJob(id)).status).toBe('created');
  });

  it('tells a worker with the wrong token what to fix, without echoing the token', async () => {
    const wrong = `wrong-${randomBytes(16).toString('hex')}`;
    const err = await remote({ token: wrong })
      .getById(randomUUID())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkerApiError);
    expect(String(err)).toMatch(/401 UNAUTHORIZED.*RENDERBRIDGE_WORKER_TOKEN/);
    expect(String(err)).not.toContain(wrong);
  });

  it('the worker token does not work on the public API', async () => {
    const r = await api(svc.baseUrl, TOKEN)('GET', '/jobs');
    expect(r.status).toBe(401);
    expect(errorBody(r).name).toBe('UNAUTHORIZED');
  });

  it('without the farm-wide token the service still serves the worker API, to per-worker tokens only', async () => {
    const plain = await startTestService();
    try {
      const r = await internal('GET', `/jobs/${randomUUID()}`, undefined, { origin: plain.origin });
      expect(r.status).toBe(401);
      expect(errorBody(r).name).toBe('UNAUTHORIZED');
      const err = await new RemoteWorkerJobs({ serviceUrls: [plain.origin], token: TOKEN })
        .getById(randomUUID())
        .catch((e: unknown) => e);
      expect(String(err)).toMatch(
        /unknown or revoked; create this worker's own token with renderbridge admin create-worker-token/,
      );
      const { token } = await createWorkerToken(plain.service.ports.workerTokens, 'plain-1');
      expect(await new RemoteWorkerJobs({ serviceUrls: [plain.origin], token }).whoami()).toBe('plain-1');
      expect(await new RemoteWorkerJobs({ serviceUrls: [plain.origin], token }).getById(randomUUID())).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  it('the farm-wide token names no worker, and the service warns about it at start', async () => {
    expect(await jobs.whoami()).toBeNull();
    expect(svc.logs.join('')).toMatch(/deprecated farm-wide worker token.*create-worker-token/);
  });
});

describe('request validation', () => {
  it.each([
    ['an unknown status', 'transition', { from: ['created'], to: 'done' }],
    ['an empty from', 'transition', { from: [], to: 'validating' }],
    ['internal that is not an object', 'transition', { from: ['created'], to: 'validating', internal: [1, 2] }],
    ['a patch of the status', 'transition', { from: ['created'], to: 'validating', patch: { status: 'completed' } }],
    ['a patch of an unknown field', 'update', { patch: { colour: 'red' } }],
    ['a patch with a bad value', 'update', { patch: { rootFolderId: 'not-a-uuid' } }],
    ['no patch', 'update', {}],
    ['a move the state machine forbids', 'transition', { from: ['created'], to: 'completed' }],
  ])('answers 400 with the zod error body for %s', async (_n, route, body) => {
    const id = (await createJob(call)).id;
    const r = await internal('POST', `/jobs/${id}/${route}`, body);
    expect(r.status).toBe(400);
    expect(errorBody(r)).toMatchObject({ name: 'VALIDATION_ERROR', type: 'zod' });
    expect((await publicJob(id)).status).toBe('created');
  });

  it('answers 400 for a bad id, progress of another job, and a body that is not JSON', async () => {
    const id = (await createJob(call)).id;
    const badId = await internal('GET', '/jobs/not-a-uuid');
    expect([badId.status, errorBody(badId).name]).toEqual([400, 'VALIDATION_ERROR']);
    const other = await internal('PUT', `/jobs/${id}/progress`, progressOf(randomUUID()));
    expect(other.status).toBe(400);
    expect(errorBody(other).details[0]).toMatchObject({ code: 'job_id_mismatch', path: ['body', 'jobId'] });
    const badProgress = await internal('PUT', `/jobs/${id}/progress`, { ...progressOf(id), percent: 140 });
    expect(badProgress.status).toBe(400);
    const notJson = await internal('POST', `/jobs/${id}/transition`, undefined, { raw: '{"from": [' });
    expect([notJson.status, errorBody(notJson).name]).toEqual([400, 'INVALID_JSON']);
    const unknown = await internal('GET', `/jobs/${randomUUID()}`);
    expect([unknown.status, errorBody(unknown).name]).toEqual([404, 'JOB_NOT_FOUND']);
  });
});

describe('failover across service URLs', () => {
  it('moves past a closed port to the live service', async () => {
    const { id } = await createJob(call);
    const store = remote({ serviceUrls: [await closedPortUrl(), svc.origin] });
    expect((await store.getById(id))?.job.id).toBe(id);
    expect((await store.transition(id, ['created'], 'validating'))?.job.status).toBe('validating');
  });

  it('moves past an instance answering 503, and then keeps to the one that answered', async () => {
    let hits = 0;
    const sick = await serve((_req, res) => {
      hits++;
      res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'SERVICE_UNAVAILABLE' }));
    });
    const { id } = await createJob(call);
    const store = remote({ serviceUrls: [sick, svc.origin] });
    expect((await store.getById(id))?.job.id).toBe(id);
    await store.update(id, { normalizedSeconds: 3 });
    expect(hits).toBe(1);
    expect((await publicJob(id)).normalizedSeconds).toBe(3);
  });

  it('moves past an instance that does not answer within timeoutMs', async () => {
    const hung = await serve(() => undefined);
    const { id } = await createJob(call);
    const started = Date.now();
    expect((await remote({ serviceUrls: [hung, svc.origin], timeoutMs: 300 }).getById(id))?.job.id).toBe(id);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('does not retry a 4xx on another URL', async () => {
    let hits = 0;
    const refusing = await serve((_req, res) => {
      hits++;
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify({ message: 'no', name: 'UNAUTHORIZED', details: [], type: 'api', metadata: {} }));
    });
    const { id } = await createJob(call);
    const err = await remote({ serviceUrls: [refusing, svc.origin] })
      .getById(id)
      .catch((e: unknown) => e);
    expect((err as WorkerApiError).status).toBe(401);
    expect(String(err)).toContain(refusing);
    expect(hits).toBe(1);
  });

  it('gives up after retryForMs with a message naming each URL and what to check, never the token', async () => {
    const closed = await closedPortUrl();
    const started = Date.now();
    const err = await remote({ serviceUrls: [closed], retryForMs: 600 })
      .getById(randomUUID())
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(String(err)).toContain(`${closed} (ECONNREFUSED`);
    expect(String(err)).toMatch(/reachable from this worker/);
    expect(String(err)).not.toContain(TOKEN);
  });

  it('a transition whose answer was lost is retried safely: it reports the move it made, once', async () => {
    const live = new URL(svc.origin);
    let forwarded = 0;
    // Forwards the request to the service, which applies it, then drops the connection.
    const lossy = await serve((req, res) => {
      forwarded++;
      const up = request(
        { host: live.hostname, port: live.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          answer.resume().on('end', () => res.socket?.destroy());
        },
      );
      req.pipe(up);
    });
    const { id } = await createJob(call);
    const store = remote({ serviceUrls: [lossy, svc.origin] });
    const moved = await store.transition(id, ['created'], 'validating', { normalizedSeconds: 7 });
    expect(forwarded).toBe(1);
    expect(moved?.job).toMatchObject({ status: 'validating', normalizedSeconds: 7 });
    // A move someone else already made past `to` is still reported as not made.
    const lossy2 = remote({ serviceUrls: [lossy, svc.origin] });
    await jobs.transition(id, ['validating'], 'failed');
    expect(await lossy2.transition(id, ['validating'], 'validated')).toBeUndefined();
  });
});

const blender =
  spawnSync(process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender', ['--version'], { stdio: 'ignore' }).status === 0;
if (!blender) {
  if (process.env.CI === 'true')
    throw new Error('Blender is missing: the remote worker render test needs it on CI (apt-get install blender)');
  console.warn('skipping the remote worker render: Blender is not installed (apt-get install blender)');
}

describe.skipIf(!blender)('a worker that sees jobs only through the worker API', () => {
  it('validates and renders a job end to end: completed, frame downloadable, webhook enqueued once', async () => {
    const workDir = await mkdtemp(path.join(tmpdir(), 'rb-remote-worker-'));
    const logs: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(line) });
    const remoteJobs = remote();
    const worker = await startWorker(
      {
        jobs: remoteJobs,
        storage: svc.service.ports.storage,
        queue: svc.service.ports.queue,
        onCompleted: (rec) => remoteJobs.completed(rec),
      },
      defaultConfig({ dataDir: workDir, workers: 1 }),
      log,
      { runtime: { heartbeatMs: 200, pollMs: 100, workerId: `remote-${randomUUID().slice(0, 8)}` } },
    );
    try {
      expect(worker.runtime, 'the worker found no Blender').toBeDefined();
      const client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
      const target = await client.uploadProject(await buildFixture('basic'));
      const job = await client.createJob({ slug: target.slug });
      await client.validateJob(job.id, {});
      const validated = await client.waitForStatus(job.id, ['validated'], { intervalMs: 200, timeoutMs: 90_000 });
      expect(validated.analysis?.output?.resolution).toEqual([64, 48]);
      await client.renderJob(job.id, tinyRender('1'));
      const done = await client.waitForStatus(job.id, ['completed'], { intervalMs: 200, timeoutMs: 120_000 });
      expect(done.finalConfig).toMatchObject({ frameRanges: ['1'], resolution: [64, 48] });

      const frames = (await client.getDownloads(job.id)).frameOutputs ?? [];
      expect(frames.map((f) => f.fileName)).toEqual(['f_0001.png']);
      const png = Buffer.from(await (await fetch(frames[0]!.url)).arrayBuffer());
      expect([pngInfo(png).width, pngInfo(png).height]).toEqual([64, 48]);
      expect(await client.getJobProgress(job.id)).toMatchObject({ framesTotal: 1, framesDone: 1 });
      // The worker reports the completion (which enqueues the webhook) just after the job turns
      // completed, so a fast poll may get there first.
      await waitUntil(
        'the onRenderComplete webhook enqueued',
        async () => (await svc.service.webhooks.listForJob(job.id)).length > 0,
        { timeoutMs: 10_000 },
      );
      expect(await svc.service.webhooks.listForJob(job.id)).toHaveLength(1);

      // Every state change of the job went through the worker API.
      const seen = svc.logs.join('');
      for (const route of ['transition', 'update', 'progress', 'completed'])
        expect(seen).toContain(`${WORKER_API_PREFIX}/jobs/${job.id}/${route}`);
    } catch (err) {
      console.error(logs.slice(-30).join(''));
      throw err;
    } finally {
      await worker.stop();
      await rm(workDir, { recursive: true, force: true });
    }
  }, 240_000);

  it('renders a job with its own token, no queue credential: tasks and job state all via the worker API', async () => {
    const workDir = await mkdtemp(path.join(tmpdir(), 'rb-remote-worker-'));
    const logs: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(line) });
    const name = `own-${randomUUID().slice(0, 8)}`;
    const { token } = await createWorkerToken(svc.service.ports.workerTokens, name);
    const remoteJobs = remote({ token });
    expect(await remoteJobs.whoami()).toBe(name);
    const queue = new RemoteTaskQueue({ serviceUrls: [svc.origin], token, retryDelayMs: 50 });
    const worker = await startWorker(
      { jobs: remoteJobs, storage: svc.service.ports.storage, queue, onCompleted: (rec) => remoteJobs.completed(rec) },
      defaultConfig({ dataDir: workDir, workers: 1 }),
      log,
      { runtime: { heartbeatMs: 200, pollMs: 100, workerName: name, workerId: `${name}:${process.pid}` } },
    );
    try {
      expect(worker.runtime, 'the worker found no Blender').toBeDefined();
      const client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
      const target = await client.uploadProject(await buildFixture('basic'));
      const job = await client.createJob({ slug: target.slug });
      await client.validateJob(job.id, {});
      await client.waitForStatus(job.id, ['validated'], { intervalMs: 200, timeoutMs: 90_000 });
      await client.renderJob(job.id, tinyRender('1-2'));
      const done = await client.waitForStatus(job.id, ['completed'], { intervalMs: 200, timeoutMs: 120_000 });
      expect(done.status).toBe('completed');
      expect(((await client.getDownloads(job.id)).frameOutputs ?? []).map((f) => f.fileName)).toEqual([
        'f_0001.png',
        'f_0002.png',
      ]);
      // Every task ran under this worker's name, claimed through the worker API (the finalize
      // task is marked done just after it completed the job).
      const runs = await waitUntil(
        'every task of the job done',
        async () => {
          const all = await svc.service.ports.queue.jobTaskRuns(job.id);
          return all.every((r) => r.state === 'done') ? all : undefined;
        },
        { timeoutMs: 10_000 },
      );
      expect(runs.length).toBeGreaterThanOrEqual(3);
      for (const r of runs)
        expect(r, r.id).toMatchObject({
          state: 'done',
          worker: expect.stringMatching(new RegExp(`^${name}:${process.pid}:`)),
        });
      expect(svc.logs.join('')).toContain(`${WORKER_API_PREFIX}/tasks/claim`);
    } catch (err) {
      console.error(logs.slice(-30).join(''));
      throw err;
    } finally {
      await worker.stop();
      await rm(workDir, { recursive: true, force: true });
    }
  }, 240_000);
});

describe('logs', () => {
  it('never contain the worker token, though the worker API calls are logged', () => {
    const all = svc.logs.join('');
    expect(all).toContain(`${WORKER_API_PREFIX}/jobs/`);
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain(TOKEN.slice(API_KEY_PREFIX.length));
    expect(hookHits).toBeGreaterThan(0);
  });
});
