// The daemon's routes over real HTTP. Jobs routes run against the real service through the real
// tracker. The pack, submission and download routes are checked for routing and validation only,
// with the routingOnly* stand-ins below, because the real Packer, Submissions and Downloads are
// written beside this work (their own tests use the real parts).
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyProvider } from '../../daemon/api-key.js';
import { buildDaemonApp } from '../../daemon/app.js';
import { defaultDaemonConfig } from '../../daemon/config.js';
import { EventBus } from '../../daemon/events.js';
import type { Downloads, Packer, Submissions } from '../../daemon/ports.js';
import { newToken } from '../../daemon/state-file.js';
import { JobTracker } from '../../daemon/tracker.js';
import { ErrorBody } from '../../shared/api/error-body.js';
import { DAEMON_ROUTES, type DownloadState, type PackRequest, type PackResult, type Submission, type SubmitRequest } from '../../shared/daemon/api.js';
import { waitUntil } from '../helpers/e2e.js';
import { createJob } from '../helpers/flow.js';
import { api } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { rawRequest, type RawAnswer } from './harness.js';

/** Routing-only stand-in for the Packer port: records what the route passed, answers a fixed pack. */
function routingOnlyPacker(calls: PackRequest[]): Packer {
  const result = (req: PackRequest): PackResult => ({
    packId: 'pack-1',
    sourcePath: req.path,
    zipPath: '/tmp/pack-1.zip',
    bytes: 10,
    fileCount: 1,
    sceneFile: 'scene.blend',
    preflight: { schemaVersion: 1, source: 'client_zip_inspection', blendFiles: [req.path] },
    missing: [],
    remaps: [],
    warnings: [],
  });
  return { pack: async (req) => (calls.push(req), result(req)), get: () => undefined, discard: async () => {} };
}

/** Routing-only stand-in for the Submissions port. */
function routingOnlySubmissions(calls: SubmitRequest[]): Submissions {
  const made: Submission[] = [];
  return {
    start: (req) => {
      calls.push(req);
      const now = new Date().toISOString();
      const s: Submission = { id: `sub-${made.length + 1}`, path: req.pack?.path ?? req.packId ?? '', step: 'packing', jobId: null, uploadedBytes: 0, totalBytes: 0, preflight: null, warnings: [], error: null, outDir: req.outDir ?? null, createdAt: now, updatedAt: now };
      made.push(s);
      return s;
    },
    get: (id) => made.find((s) => s.id === id),
    list: () => made,
    settled: async (id) => made.find((s) => s.id === id)!,
  };
}

/** Routing-only stand-in for the Downloads port. */
function routingOnlyDownloads(calls: [string, string | undefined][]): Downloads {
  const state = (jobId: string, outDir: string | undefined): DownloadState => ({ jobId, outDir: outDir ?? `/downloads/${jobId}`, state: 'pending', files: 0, filesDone: 0, bytes: 0, bytesDone: 0, skipped: 0, refused: [], error: null });
  return { start: (jobId, outDir) => (calls.push([jobId, outDir]), state(jobId, outDir)), get: () => undefined, settled: async (jobId) => state(jobId, undefined) };
}

interface Daemon {
  app: FastifyInstance;
  tracker: JobTracker;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<RawAnswer>;
}

const opened: Daemon[] = [];
const packs: PackRequest[] = [];
const submits: SubmitRequest[] = [];
const downloads: [string, string | undefined][] = [];

async function openDaemon(serviceUrl: string, apiKey: string | undefined): Promise<Daemon> {
  const config = defaultDaemonConfig({}, { serviceUrl, port: 0, pollActiveMs: 100, pollIdleMs: 300 });
  const clients = new ApiKeyProvider({ serviceUrl, keychain: null, env: apiKey ? { RENDERBRIDGE_API_KEY: apiKey } : {}, clientOptions: { maxRetries: 0 } });
  const events = new EventBus();
  const tracker = new JobTracker({ clients, events, pollActiveMs: 100, pollIdleMs: 300 });
  const token = newToken();
  const app = buildDaemonApp({
    config,
    token,
    version: 't',
    startedAt: new Date().toISOString(),
    events,
    clients,
    tracker,
    packer: routingOnlyPacker(packs),
    submissions: routingOnlySubmissions(submits),
    downloads: routingOnlyDownloads(downloads),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  tracker.start();
  const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const d: Daemon = {
    app,
    tracker,
    call: (method, path, body, headers = {}) =>
      rawRequest(`${origin}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      }),
  };
  opened.push(d);
  return d;
}

let svc: TestService;
let d: Daemon;

beforeAll(async () => {
  svc = await startTestService();
  d = await openDaemon(svc.baseUrl, svc.apiKey);
});
afterAll(async () => {
  for (const o of opened) {
    await o.tracker.stop();
    await o.app.close();
  }
  await svc?.close();
});

function errorOf(res: RawAnswer): ErrorBody {
  return ErrorBody.parse(res.json);
}

describe('jobs routes (real service)', () => {
  it('lists tracked jobs, reads one fresh, cancels it, and passes the service\'s errors through unchanged', async () => {
    const job = await createJob(api(svc.baseUrl, svc.apiKey));
    await waitUntil('the job in GET /jobs', async () => {
      const res = await d.call('GET', '/jobs');
      return DAEMON_ROUTES.listJobs.response.parse(res.json).jobs.some((t) => t.job.id === job.id);
    });
    const one = await d.call('GET', `/jobs/${job.id}`);
    expect(one.status).toBe(200);
    expect(DAEMON_ROUTES.getJob.response.parse(one.json)).toMatchObject({ job: { id: job.id, status: 'created' }, download: null });

    const canceled = await d.call('POST', `/jobs/${job.id}/cancel`);
    expect(canceled.status).toBe(200);
    expect(DAEMON_ROUTES.cancelJob.response.parse(canceled.json).job.status).toBe('canceled');

    // The service's 409 and 404 reach the caller with the service's name, status and requestId.
    const again = await d.call('POST', `/jobs/${job.id}/cancel`);
    expect(again.status).toBe(409);
    expect(errorOf(again)).toMatchObject({ name: 'CANCEL_NOT_ALLOWED', type: 'api' });
    const unknown = randomUUID();
    const missing = await d.call('GET', `/jobs/${unknown}`);
    expect(missing.status).toBe(404);
    const body = errorOf(missing);
    expect(body).toMatchObject({ name: 'JOB_NOT_FOUND', metadata: { jobId: unknown } });
    expect(svc.logs.join('')).toContain(String(body.metadata.requestId));

    const bad = await d.call('GET', '/jobs/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(errorOf(bad)).toMatchObject({ name: 'DAEMON_BAD_REQUEST', type: 'zod', details: [{ path: ['params', 'id'] }] });
  });

  it('answers NO_API_KEY without a key and SERVICE_UNREACHABLE when the service does not answer', async () => {
    const keyless = await openDaemon(svc.baseUrl, undefined);
    const noKey = await keyless.call('GET', `/jobs/${randomUUID()}`);
    expect(noKey.status).toBe(409);
    expect(errorOf(noKey).name).toBe('NO_API_KEY');

    const gone = await startTestService();
    const url = gone.baseUrl;
    await gone.close();
    const orphan = await openDaemon(url, svc.apiKey);
    const down = await orphan.call('GET', `/jobs/${randomUUID()}`);
    expect(down.status).toBe(502);
    const err = errorOf(down);
    expect(err.name).toBe('SERVICE_UNREACHABLE');
    expect(down.text).not.toContain(svc.apiKey);
    expect(down.text).not.toMatch(/\n\s+at /); // no stack
  });
});

describe('pack, submission and download routes (routing and validation only)', () => {
  it('passes a valid pack request to the packer and answers its result', async () => {
    const res = await d.call('POST', '/pack', { path: '/projects/shot.blend' });
    expect(res.status).toBe(200);
    expect(DAEMON_ROUTES.pack.response.parse(res.json).packId).toBe('pack-1');
    expect(packs.at(-1)).toEqual({ path: '/projects/shot.blend' });
  });

  it('refuses invalid bodies with DAEMON_BAD_REQUEST listing each field, never a 500', async () => {
    const cases: [string, string, unknown, string[]][] = [
      ['missing path', '/pack', {}, ['body', 'path']],
      ['unknown field', '/pack', { path: '/a.blend', pth: 1 }, ['body']],
      ['both packId and pack', '/submissions', { packId: 'p', pack: { path: '/a.blend' } }, ['body']],
      ['bad frames', '/submissions', { packId: 'p', settings: { frames: [] } }, ['body', 'settings', 'frames']],
      ['empty outDir', `/jobs/${randomUUID()}/download`, { outDir: '' }, ['body', 'outDir']],
    ];
    const packsBefore = packs.length;
    for (const [what, path, body, at] of cases) {
      const res = await d.call('POST', path, body);
      expect(res.status, what).toBe(400);
      const err = errorOf(res);
      expect(err.name, what).toBe('DAEMON_BAD_REQUEST');
      expect(err.type, what).toBe('zod');
      expect(err.details.some((x) => at.every((p, i) => x.path[i] === p)), `${what}: ${JSON.stringify(err.details)}`).toBe(true);
    }
    for (const [what, raw, type] of [
      ['broken JSON', '{"path":', 'application/json'],
      ['not JSON', 'path=/a.blend', 'text/plain'],
      ['empty JSON body', '', 'application/json'],
    ] as const) {
      const res = await d.call('POST', '/pack', raw, { 'content-type': type });
      expect(res.status, what).toBe(400);
      expect(errorOf(res).name, what).toBe('DAEMON_BAD_REQUEST');
    }
    expect(packs.length).toBe(packsBefore);
  });

  it('starts a submission with its defaults filled in, lists it and finds it by id', async () => {
    const res = await d.call('POST', '/submissions', { pack: { path: '/projects/shot.blend' }, outDir: '/out' });
    expect(res.status).toBe(202);
    const sub = DAEMON_ROUTES.submit.response.parse(res.json);
    expect(submits.at(-1)).toEqual({ pack: { path: '/projects/shot.blend' }, outDir: '/out', settings: {}, download: true });
    const list = DAEMON_ROUTES.listSubmissions.response.parse((await d.call('GET', '/submissions')).json);
    expect(list.submissions.map((s) => s.id)).toContain(sub.id);
    expect((await d.call('GET', `/submissions/${sub.id}`)).status).toBe(200);
    const unknown = await d.call('GET', '/submissions/nope');
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown).name).toBe('DAEMON_NOT_FOUND');
  });

  it('starts a download with or without a body', async () => {
    const id = randomUUID();
    const bare = await d.call('POST', `/jobs/${id}/download`);
    expect(bare.status).toBe(202);
    expect(DAEMON_ROUTES.downloadJob.response.parse(bare.json)).toMatchObject({ jobId: id, outDir: `/downloads/${id}` });
    const withDir = await d.call('POST', `/jobs/${id}/download`, { outDir: '/renders/shot' });
    expect(withDir.status).toBe(202);
    expect(downloads.slice(-2)).toEqual([
      [id, undefined],
      [id, '/renders/shot'],
    ]);
  });

  it('answers DAEMON_NOT_FOUND for unknown routes and methods', async () => {
    for (const [method, path] of [['GET', '/nope'], ['DELETE', '/jobs'], ['GET', '/pack']] as const) {
      const res = await d.call(method, path);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(errorOf(res).name).toBe('DAEMON_NOT_FOUND');
    }
  });
});
