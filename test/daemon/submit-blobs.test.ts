// Submissions through the real daemon (every real part: packer with headless-Blender tracing,
// submissions, downloads) to the real service with its worker and real Blender, every upload byte
// through a counting proxy. With the content-addressed upload the first submission sends the
// project as blobs and renders it from them; a second sends the manifest and nothing else, and
// says how much the farm already held. With the extension turned off the same daemon falls back
// to the spec's single PUT of a zip, and the job renders. `renderbridge submit --json` reports
// the same upload data.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBridgeDaemon } from '../../daemon/assemble.js';
import { Submission } from '../../shared/daemon/submission-schemas.js';
import { EXIT } from '../../cli/exit-codes.js';
import { runCli } from '../helpers/cli-run.js';
import { startCountingProxy, type CountingProxy } from '../helpers/counting-proxy.js';
import { startE2E, waitUntil, type E2E } from '../helpers/e2e.js';
import { buildPackProject, type PackProject } from '../helpers/pack-fixture.js';
import { daemonCall, startTestBridge } from './harness.js';

const MiB = 1024 * 1024;
let work: string;
let project: PackProject;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-submit-blobs-'));
  project = await buildPackProject(path.join(work, 'project'));
}, 120_000);
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

interface Farm {
  e2e: E2E;
  proxy: CountingProxy;
  daemon: RunningBridgeDaemon;
  /** The API root through the proxy. */
  serviceUrl: string;
  close(): Promise<void>;
}

let farm: Farm | undefined;
afterEach(async () => {
  await farm?.close();
  farm = undefined;
});

/**
 * Service with its worker, a proxy in front of it (its URLs signed for the proxy), a daemon talking through the proxy.
 */
async function startFarm(name: string, blobUploads: boolean): Promise<Farm> {
  const proxy = await startCountingProxy();
  const e2e = await startE2E({ publicUrl: proxy.origin, blobUploads });
  proxy.target = { host: '127.0.0.1', port: Number(new URL(e2e.svc.origin).port) };
  const serviceUrl = `${proxy.origin}${new URL(e2e.svc.baseUrl).pathname}`;
  const daemon = await startTestBridge({
    serviceUrl,
    apiKey: e2e.svc.apiKey,
    work: path.join(work, name),
    stateDir: path.join(work, name, 'state'),
  });
  return {
    e2e,
    proxy,
    daemon,
    serviceUrl,
    async close() {
      await daemon.close();
      await e2e.svc.close();
      await proxy.close();
    },
  };
}

/** Submits through the daemon's API and polls GET /submissions/:id until it ends. */
async function submitAndSettle(f: Farm, body: Record<string, unknown>): Promise<Submission> {
  const call = daemonCall(f.daemon);
  const started = await call('POST', '/submissions', body);
  expect(started.status, started.text).toBe(202);
  const id = Submission.parse(started.json).id;
  return waitUntil(
    `submission ${id} to end`,
    async () => {
      const s = Submission.parse((await call('GET', `/submissions/${id}`)).json);
      return s.step === 'done' || s.step === 'failed' ? s : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 200 },
  );
}

describe('submissions and the content-addressed upload', () => {
  it(
    'sends the project as blobs (a cut part sent again) and renders it; a second submission sends little more ' +
      'than the manifest',
    async () => {
      farm = await startFarm('blobs', true);
      // One part's connection dies after its first kilobyte: that part alone is sent again.
      farm.proxy.cut({ request: /^PUT \/blobs\//, afterBytes: 1024 });
      const outDir = path.join(work, 'blobs-out');
      const first = await submitAndSettle(farm, { pack: { path: project.main }, settings: { frames: ['1'] }, outDir });
      expect(first.error).toBeNull();
      expect(first.step).toBe('done');
      expect(first.upload).toMatchObject({ mode: 'blobs', bytesSkipped: 0, retries: 1 });
      expect(farm.proxy.cuts()).toBe(1);
      const sent = first.upload?.bytesTotal ?? 0;
      expect(first.upload?.bytesDone).toBe(sent);
      expect(sent).toBeGreaterThan(0);
      expect(first.uploadedBytes).toBe(sent);
      // The job rendered from its blobs: the frame is in the folder.
      expect((await readdir(outDir)).some((f) => f.endsWith('.png'))).toBe(true);
      const job = await farm.e2e.client.getJob(first.jobId ?? '');
      expect(job.status).toBe('completed');

      farm.proxy.reset();
      const second = await submitAndSettle(farm, {
        pack: { path: project.main },
        settings: { frames: ['1'] },
        mode: 'check',
      });
      expect(second.error).toBeNull();
      expect(second.step).toBe('done');
      expect(second.upload?.mode).toBe('blobs');
      // Everything but the pack's manifest (which names this pack) was already on the farm.
      expect(second.upload?.bytesSkipped).toBeGreaterThan(sent / 2);
      expect(second.upload?.bytesTotal).toBeLessThan(64 * 1024);
      expect(farm.proxy.up()).toBeLessThan(1 * MiB);
    },
    240_000,
  );

  it(
    'falls back to the single PUT of a zip when the service has the extension turned off, sent again when cut, ' +
      'and the job renders',
    async () => {
      farm = await startFarm('single', false);
      expect(await farm.e2e.client.hasExtension('content-addressed-uploads')).toBe(false);
      // The first PUT's connection dies after its first kilobyte: the zip is sent again from the start.
      farm.proxy.cut({ request: /^PUT \/storage\//, afterBytes: 1024 });
      const outDir = path.join(work, 'single-out');
      const done = await submitAndSettle(farm, { pack: { path: project.main }, settings: { frames: ['1'] }, outDir });
      expect(done.error).toBeNull();
      expect(done.step).toBe('done');
      expect(done.upload).toMatchObject({ mode: 'single-put', bytesSkipped: 0, retries: 1 });
      expect(farm.proxy.cuts()).toBe(1);
      expect(done.upload?.bytesDone).toBe(done.upload?.bytesTotal);
      // The packer zipped on demand: the zipping progress was reported before the PUT.
      expect(done.pack?.bytesTotal).toBeGreaterThan(0);
      expect(farm.proxy.requests().filter((r) => r.startsWith('PUT /storage/'))).toHaveLength(2);
      expect(farm.proxy.requests().some((r) => r.startsWith('PUT /blobs/'))).toBe(false);
      expect((await readdir(outDir)).some((f) => f.endsWith('.png'))).toBe(true);
    },
    240_000,
  );

  it('renderbridge submit --json reports the upload mode and bytes, skipped bytes on a second run', async () => {
    farm = await startFarm('cli', true);
    const home = path.join(work, 'cli-home');
    const env = {
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      XDG_STATE_HOME: path.join(home, 'state'),
      XDG_DATA_HOME: path.join(home, 'data'),
      RENDERBRIDGE_SERVICE_URL: farm.serviceUrl,
      RENDERBRIDGE_API_KEY: farm.e2e.svc.apiKey,
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
    };
    const uploadOf = async (): Promise<NonNullable<Submission['upload']>> => {
      const r = await runCli(['submit', project.main, '--frames', '1', '--no-wait', '--no-download', '--json'], env);
      expect(r.code, r.stderr).toBe(EXIT.OK);
      const upload = Submission.parse((JSON.parse(r.stdout) as { submission: unknown }).submission).upload;
      if (!upload) throw new Error(`no upload in ${r.stdout}`);
      return upload;
    };
    const first = await uploadOf();
    expect(first).toMatchObject({ mode: 'blobs', bytesSkipped: 0 });
    expect(first.bytesDone).toBe(first.bytesTotal);
    const second = await uploadOf();
    expect(second.mode).toBe('blobs');
    expect(second.bytesSkipped).toBeGreaterThan(first.bytesTotal / 2);
    expect(second.bytesTotal).toBeLessThan(64 * 1024);
  }, 240_000);
});
