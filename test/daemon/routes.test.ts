// The daemon's routes over real HTTP with every real part (startBridgeDaemon through
// startTestBridge): the real packer (headless-Blender tracing), submissions, downloads and job
// tracker, against a real reference service whose worker validates with real Blender.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBridgeDaemon } from '../../daemon/assemble.js';
import { ErrorBody } from '../../shared/api/error-body.js';
import { DAEMON_ROUTES } from '../../shared/daemon/api.js';
import { startE2E, waitUntil, type E2E } from '../helpers/e2e.js';
import { buildFixture } from '../helpers/fixtures.js';
import { createJob } from '../helpers/flow.js';
import { api } from '../helpers/http.js';
import { startTestService } from '../helpers/service.js';
import { daemonCall, rawRequest, startTestBridge, type RawAnswer } from './harness.js';

type Call = ReturnType<typeof daemonCall>;

let e2e: E2E;
let work: string;
let d: RunningBridgeDaemon;
let call: Call;
const opened: RunningBridgeDaemon[] = [];

/** A bridge daemon with its own state and work folders under `work/<name>`; apiKey '' means none configured. */
async function openBridge(name: string, serviceUrl: string, apiKey: string): Promise<RunningBridgeDaemon> {
  const dir = path.join(work, name);
  const daemon = await startTestBridge({ serviceUrl, apiKey, work: dir, stateDir: path.join(dir, 'state') });
  opened.push(daemon);
  return daemon;
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-routes-'));
  e2e = await startE2E();
  d = await openBridge('main', e2e.svc.baseUrl, e2e.svc.apiKey);
  call = daemonCall(d);
}, 120_000);
afterAll(async () => {
  for (const o of opened) await o.close();
  await e2e?.svc.close();
  if (work) await rm(work, { recursive: true, force: true });
});

function errorOf(res: RawAnswer): ErrorBody {
  return ErrorBody.parse(res.json);
}

/** The zips the main daemon's packer holds (its work folder). */
async function zips(): Promise<string[]> {
  return (await readdir(path.join(work, 'main', 'packs')).catch(() => [])).filter((f) => f.endsWith('.zip'));
}

describe('jobs routes', () => {
  it("lists tracked jobs, reads one fresh, cancels it, and passes the service's errors through unchanged", async () => {
    const job = await createJob(api(e2e.svc.baseUrl, e2e.svc.apiKey));
    await waitUntil('the job in GET /jobs', async () => {
      const res = await call('GET', '/jobs');
      return DAEMON_ROUTES.listJobs.response.parse(res.json).jobs.some((t) => t.job.id === job.id);
    });
    const one = await call('GET', `/jobs/${job.id}`);
    expect(one.status).toBe(200);
    expect(DAEMON_ROUTES.getJob.response.parse(one.json)).toMatchObject({
      job: { id: job.id, status: 'created' },
      download: null,
    });

    const canceled = await call('POST', `/jobs/${job.id}/cancel`);
    expect(canceled.status).toBe(200);
    expect(DAEMON_ROUTES.cancelJob.response.parse(canceled.json).job.status).toBe('canceled');

    // The service's 409 and 404 reach the caller with the service's name, status and requestId.
    const again = await call('POST', `/jobs/${job.id}/cancel`);
    expect(again.status).toBe(409);
    expect(errorOf(again)).toMatchObject({ name: 'CANCEL_NOT_ALLOWED', type: 'api' });
    const unknown = randomUUID();
    const missing = await call('GET', `/jobs/${unknown}`);
    expect(missing.status).toBe(404);
    const body = errorOf(missing);
    expect(body).toMatchObject({ name: 'JOB_NOT_FOUND', metadata: { jobId: unknown } });
    expect(e2e.svc.logs.join('')).toContain(String(body.metadata.requestId));

    const bad = await call('GET', '/jobs/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(errorOf(bad)).toMatchObject({
      name: 'DAEMON_BAD_REQUEST',
      type: 'zod',
      details: [{ path: ['params', 'id'] }],
    });
  });

  it('answers NO_API_KEY without a key and SERVICE_UNREACHABLE when the service does not answer', async () => {
    const keyless = daemonCall(await openBridge('keyless', e2e.svc.baseUrl, ''));
    const noKey = await keyless('GET', `/jobs/${randomUUID()}`);
    expect(noKey.status).toBe(409);
    expect(errorOf(noKey).name).toBe('NO_API_KEY');

    const gone = await startTestService();
    const url = gone.baseUrl;
    await gone.close();
    const orphan = daemonCall(await openBridge('orphan', url, e2e.svc.apiKey));
    const down = await orphan('GET', `/jobs/${randomUUID()}`);
    expect(down.status).toBe(502);
    const err = errorOf(down);
    expect(err.name).toBe('SERVICE_UNREACHABLE');
    expect(down.text).not.toContain(e2e.svc.apiKey);
    expect(down.text).not.toMatch(/\n\s+at /); // no stack
  });
});

describe('pack, submission and download routes', () => {
  it('packs the .blend of a valid pack request and answers the pack', async () => {
    const blend = await buildFixture('basic');
    const res = await call('POST', '/pack', { path: blend });
    expect(res.status, res.text).toBe(200);
    const pack = DAEMON_ROUTES.pack.response.parse(res.json);
    // The packer got the request's path: it traced and packed that file into its work folder.
    expect(pack).toMatchObject({ sourcePath: blend, sceneFile: 'basic.blend', fileCount: 1, missing: [] });
    // Hashed, not zipped: the manifest waits in the pack's folder, the files where they are.
    expect(pack.zipPath).toBeNull();
    expect(pack.files.map((f) => f.path)).toEqual(['basic.blend', 'renderbridge-manifest.json']);
    expect(existsSync(path.join(work, 'main', 'packs', pack.packId, 'renderbridge-manifest.json'))).toBe(true);
  });

  it('refuses invalid bodies with DAEMON_BAD_REQUEST listing each field, never a 500', async () => {
    const cases: [string, string, unknown, string[]][] = [
      ['missing path', '/pack', {}, ['body', 'path']],
      ['unknown field', '/pack', { path: '/a.blend', pth: 1 }, ['body']],
      ['missing path (background pack)', '/packs', {}, ['body', 'path']],
      ['both packId and pack', '/submissions', { packId: 'p', pack: { path: '/a.blend' } }, ['body']],
      ['bad frames', '/submissions', { packId: 'p', settings: { frames: [] } }, ['body', 'settings', 'frames']],
      ['empty outDir', `/jobs/${randomUUID()}/download`, { outDir: '' }, ['body', 'outDir']],
    ];
    const zipsBefore = await zips();
    const submissionsBefore = DAEMON_ROUTES.listSubmissions.response.parse((await call('GET', '/submissions')).json)
      .submissions.length;
    for (const [what, p, body, at] of cases) {
      const res = await call('POST', p, body);
      expect(res.status, what).toBe(400);
      const err = errorOf(res);
      expect(err.name, what).toBe('DAEMON_BAD_REQUEST');
      expect(err.type, what).toBe('zod');
      expect(
        err.details.some((x) => at.every((q, i) => x.path[i] === q)),
        `${what}: ${JSON.stringify(err.details)}`,
      ).toBe(true);
    }
    for (const [what, raw, type] of [
      ['broken JSON', '{"path":', 'application/json'],
      ['not JSON', 'path=/a.blend', 'text/plain'],
      ['empty JSON body', '', 'application/json'],
    ] as const) {
      const res = await rawRequest(`${d.origin}/pack`, {
        method: 'POST',
        headers: { authorization: `Bearer ${d.token}`, 'content-type': type },
        body: raw,
      });
      expect(res.status, what).toBe(400);
      expect(errorOf(res).name, what).toBe('DAEMON_BAD_REQUEST');
    }
    // Nothing reached the packer or the submissions: no zip was made, no submission started.
    expect(await zips()).toEqual(zipsBefore);
    expect(
      DAEMON_ROUTES.listSubmissions.response.parse((await call('GET', '/submissions')).json).submissions,
    ).toHaveLength(submissionsBefore);
  });

  it('starts a submission with its defaults filled in, lists it and finds it by id', async () => {
    const blend = await buildFixture('basic');
    const outDir = path.join(work, 'out');
    const res = await call('POST', '/submissions', { pack: { path: blend }, outDir });
    expect(res.status, res.text).toBe(202);
    const sub = DAEMON_ROUTES.submit.response.parse(res.json);
    expect(sub).toMatchObject({ path: blend, step: 'packing' });
    const list = DAEMON_ROUTES.listSubmissions.response.parse((await call('GET', '/submissions')).json);
    expect(list.submissions.map((s) => s.id)).toContain(sub.id);
    expect((await call('GET', `/submissions/${sub.id}`)).status).toBe(200);
    const unknown = await call('GET', '/submissions/nope');
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown).name).toBe('DAEMON_NOT_FOUND');

    // The defaults: `download: true` gives the rendering submission its outDir (null without a
    // download), and `settings: {}` asks the service for the scene's own settings.
    const rendering = await waitUntil(
      'the submission to start rendering',
      async () => {
        const s = DAEMON_ROUTES.getSubmission.response.parse((await call('GET', `/submissions/${sub.id}`)).json);
        expect(s.step, JSON.stringify(s.error)).not.toBe('failed');
        return s.step === 'rendering' && s;
      },
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    expect(rendering.outDir).toBe(outDir);
    const jobId = rendering.jobId!;
    const tracked = DAEMON_ROUTES.getJob.response.parse((await call('GET', `/jobs/${jobId}`)).json);
    expect(tracked.job.requestedConfig).toEqual({ colorManagementPreset: 'default' });
    // Only the routes are under test here: the render itself is not needed.
    expect((await call('POST', `/jobs/${jobId}/cancel`)).status).toBe(200);
    const ended = await waitUntil('the submission to end', async () => {
      const s = DAEMON_ROUTES.getSubmission.response.parse((await call('GET', `/submissions/${sub.id}`)).json);
      return s.step === 'failed' && s;
    });
    expect(ended.error?.name).toBe('JOB_CANCELED');
  }, 180_000);

  it('starts a download with or without a body', async () => {
    const job = await createJob(api(e2e.svc.baseUrl, e2e.svc.apiKey));
    const bare = await call('POST', `/jobs/${job.id}/download`);
    expect(bare.status).toBe(202);
    // Without a body: the default folder under the daemon's downloads folder.
    const defaultDir = path.join(work, 'main', 'daemon-outputs', `job-${job.id.slice(0, 8)}`);
    expect(DAEMON_ROUTES.downloadJob.response.parse(bare.json)).toMatchObject({ jobId: job.id, outDir: defaultDir });
    // The job has no outputs yet: the run fails, and only then may another start (one run per job).
    const failed = await waitUntil('the download to fail', async () => {
      const t = DAEMON_ROUTES.getJob.response.parse((await call('GET', `/jobs/${job.id}`)).json);
      return t.download?.state === 'failed' && t.download;
    });
    expect(failed.error?.name).toBe('JOB_NOT_COMPLETED');
    const shot = path.join(work, 'renders', 'shot');
    const withDir = await call('POST', `/jobs/${job.id}/download`, { outDir: shot });
    expect(withDir.status).toBe(202);
    expect(DAEMON_ROUTES.downloadJob.response.parse(withDir.json)).toMatchObject({ jobId: job.id, outDir: shot });
  });

  it('answers DAEMON_NOT_FOUND for unknown routes and methods', async () => {
    for (const [method, p] of [
      ['GET', '/nope'],
      ['DELETE', '/jobs'],
      ['GET', '/pack'],
    ] as const) {
      const res = await call(method, p);
      expect(res.status, `${method} ${p}`).toBe(404);
      expect(errorOf(res).name).toBe('DAEMON_NOT_FOUND');
    }
  });
});
