// SIZE_MISMATCH, caused for real: the reference service (with its worker and real Blender) renders a
// frame, and every try of its download gets a shorter body than the service announces, because a
// proxy in front of the service's storage (test/helpers/cutting-proxy.ts, why it is a stand-in is
// said there) sends files without a length and its link drops each time. What each user sees is
// checked: `renderbridge submit` (stderr, exit code 8, no frame kept), the bridge daemon's Download
// (the job's download state, which the add-on and the job window show), and that doing what the
// message says, downloading again once the link holds, resumes and completes the frame.
import { downloadNotifier } from '../../electron/core/notifications.js';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import { startBridgeDaemon, type RunningBridgeDaemon } from '../../daemon/assemble.js';
import { defaultDaemonConfig } from '../../daemon/config.js';
import type { TrackedJob } from '../../shared/daemon/job-schemas.js';
import { runCli } from '../helpers/cli-run.js';
import { waitUntil } from '../helpers/e2e.js';
import { buildFixtureZip } from '../helpers/fixtures.js';
import { startCuttingProxy, type CuttingProxy } from '../helpers/cutting-proxy.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { daemonCall } from './harness.js';

let proxy: CuttingProxy;
let svc: TestService;
let work: string;
let zip: string;
let baseUrl: string;
let jobId = '';

beforeAll(async () => {
  proxy = await startCuttingProxy();
  svc = await startTestService({ workers: 1, publicUrl: proxy.origin });
  proxy.target = svc.origin;
  baseUrl = `${proxy.origin}${new URL(svc.baseUrl).pathname}`;
  work = await mkdtemp(path.join(tmpdir(), 'rb-size-mismatch-'));
  zip = path.join(work, 'shot.zip');
  await buildFixtureZip(['basic'], zip);
}, 120_000);
afterAll(async () => {
  await svc?.close();
  await proxy?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

function cli(args: string[]) {
  const home = path.join(work, 'cli-home');
  return runCli(args, {
    HOME: home,
    XDG_STATE_HOME: path.join(home, 'state'),
    XDG_CONFIG_HOME: path.join(home, 'config'),
    RENDERBRIDGE_SERVICE_URL: baseUrl,
    RENDERBRIDGE_API_KEY: svc.apiKey,
    // No session bus: the OS keychain is unreachable, so the key comes from the environment.
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
  });
}

const SAYS = new RegExp(
  ': expected (\\d+) bytes, received (\\d+): the file was not kept\\. Run the download again \\(it resumes\\); ' +
    'if this keeps happening, something between this computer and the farm \\(a proxy or a cache\\) changes the ' +
    "files: tell the farm's operator\\.",
);

describe('a download whose every try gets a body shorter than announced', () => {
  const out = () => path.join(work, 'out');

  it('`renderbridge submit` renders, then exits 8 with SIZE_MISMATCH naming the frame; no frame is kept', async () => {
    const r = await cli(['submit', zip, '--frames', '1', '--out', out()]);
    expect(r.code, r.stderr).toBe(EXIT.DOWNLOAD_FAILED);
    expect(r.stderr).toMatch(/failed \(job [\w-]+\): DOWNLOAD_INCOMPLETE: 1 output file\(s\) were not downloaded: /);
    expect(r.stderr).toMatch(SAYS);
    expect(r.stderr).not.toMatch(/service URL/);
    jobId = /\(job ([\w-]+)\)/.exec(r.stderr)![1]!;
    const [, expected, received] = SAYS.exec(r.stderr)!;
    expect(Number(received)).toBeLessThan(Number(expected));
    // Five tries, each cut: only the part file is there, never a frame that looks complete.
    expect(proxy.cuts).toBeGreaterThanOrEqual(5);
    const files = await readdir(out(), { recursive: true });
    expect(files.filter((f) => f.endsWith('.png'))).toEqual([]);
    expect(files.filter((f) => f.endsWith('.png.part'))).toHaveLength(1);
  }, 300_000);

  it("the daemon's Download of that job ends failed with the same SIZE_MISMATCH detail", async () => {
    expect(jobId).not.toBe('');
    const daemon: RunningBridgeDaemon = await startBridgeDaemon(
      defaultDaemonConfig(
        {},
        {
          serviceUrl: baseUrl,
          port: 0,
          stateDir: path.join(work, 'daemon-state'),
          workDir: path.join(work, 'packs'),
          downloadsDir: path.join(work, 'daemon-out'),
          pollActiveMs: 200,
          pollIdleMs: 1000,
          hotFolder: null,
          webhookSecret: null,
        },
      ),
      { keychain: null, env: { RENDERBRIDGE_API_KEY: svc.apiKey }, logger: false, version: '1.2.3-test' },
    );
    try {
      const call = daemonCall(daemon);
      const started = await call('POST', `/jobs/${jobId}/download`, { outDir: path.join(work, 'daemon-out') });
      expect(started.status, started.text).toBeLessThan(300);
      const tracked = await waitUntil(
        'the download to end',
        async () => {
          const t = (await call('GET', '/jobs')).json as { jobs: TrackedJob[] };
          const job = t.jobs.find((j) => j.job.id === jobId);
          return job?.download && job.download.state !== 'downloading' ? job : undefined;
        },
        { timeoutMs: 120_000 },
      );
      const error = tracked.download?.error;
      expect(tracked.download?.state).toBe('failed');
      expect(error?.name).toBe('DOWNLOAD_INCOMPLETE');
      expect(error?.message).toMatch(/run the download again to retry\.$/);
      expect(error?.details).toEqual([
        { code: 'SIZE_MISMATCH', path: [expect.stringMatching(/\.png$/)], message: expect.stringMatching(SAYS) },
      ]);
      expect(JSON.stringify(error)).not.toMatch(/service URL/);
      // The tray shows this state as it comes in a download event (electron/main/index.ts): a notification
      // that the folder is not the whole render, and how to get the rest.
      const notify = downloadNotifier();
      const note = notify(tracked.download!);
      // Published twice (last progress, then the outcome), it is told once.
      expect(notify(tracked.download!)).toBeNull();
      expect(note?.title).toBe('Download failed');
      expect(note?.urgency).toBe('critical');
      expect(note?.body).toContain('run the download again to retry.');
      expect(note?.body).toMatch(
        /\d+ of \d+ files are in .*daemon-out\. The frames stay on the farm: click to open the job/,
      );
      expect(note?.body).not.toMatch(/service URL/);
    } finally {
      await daemon.close();
    }
  }, 180_000);

  it('downloading again once the link holds, as the message says, resumes and completes the frame', async () => {
    expect(jobId).not.toBe('');
    proxy.cutting = null;
    const r = await cli(['jobs', 'download', jobId, '--out', out()]);
    expect(r.code, r.stderr).toBe(EXIT.OK);
    const pngs = (await readdir(out(), { recursive: true })).filter((f) => f.endsWith('.png'));
    expect(pngs).toHaveLength(1);
    // The frame is whole: the bytes the service stores, and a PNG to its end.
    const frame = await readFile(path.join(out(), pngs[0]!));
    const head = await fetch(`${svc.origin}/api/external/v1/jobs/${jobId}/downloads`, {
      headers: { authorization: `Bearer ${svc.apiKey}` },
    });
    const url = ((await head.json()) as { frames: string[] }).frames[0]!;
    const direct = Buffer.from(await (await fetch(url.replace(proxy.origin, svc.origin))).arrayBuffer());
    expect(frame.equals(direct)).toBe(true);
    expect(frame.subarray(-8, -4).toString('latin1')).toBe('IEND');
  }, 120_000);
});
