// JOB_FAILED, caused for real: a job that ends `failed` with no failedReason, which the spec allows
// ("filled when available") and the reference service never does (every move to `failed` carries
// one), so the farm here is a spec-only stand-in (test/helpers/reasonless-farm.ts). What each user
// sees is checked: the daemon's submission and job (the real bridge daemon, over HTTP), the tray's
// notification (electron/core models fed by the daemon's events), and `renderbridge submit`'s
// stderr and exit code. Each says what to do next and never blames the service URL.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import { startBridgeDaemon, type RunningBridgeDaemon } from '../../daemon/assemble.js';
import { defaultDaemonConfig } from '../../daemon/config.js';
import { DaemonEvents } from '../../electron/core/daemon-events.js';
import { trayNotifier, type NotificationModel } from '../../electron/core/notifications.js';
import type { TrackedJob } from '../../shared/daemon/job-schemas.js';
import type { Submission } from '../../shared/daemon/submission-schemas.js';
import { runCli } from '../helpers/cli-run.js';
import { waitUntil } from '../helpers/e2e.js';
import { buildFixtureZip } from '../helpers/fixtures.js';
import { startReasonlessFarm, type ReasonlessFarm } from '../helpers/reasonless-farm.js';
import { daemonCall } from './harness.js';

let farm: ReasonlessFarm;
let work: string;
let zip: string;
let daemon: RunningBridgeDaemon;
let events: DaemonEvents;
const notifications: NotificationModel[] = [];

beforeAll(async () => {
  farm = await startReasonlessFarm();
  work = await mkdtemp(path.join(tmpdir(), 'rb-job-failed-'));
  zip = path.join(work, 'shot.zip');
  await buildFixtureZip(['basic'], zip);
  const config = defaultDaemonConfig(
    {},
    {
      serviceUrl: farm.baseUrl,
      port: 0,
      stateDir: path.join(work, 'state'),
      workDir: path.join(work, 'packs'),
      downloadsDir: path.join(work, 'outputs'),
      pollActiveMs: 200,
      pollIdleMs: 1000,
      hotFolder: null,
      webhookSecret: null,
    },
  );
  daemon = await startBridgeDaemon(config, {
    keychain: null,
    env: { RENDERBRIDGE_API_KEY: farm.apiKey },
    logger: false,
    version: '1.2.3-test',
  });
  // As the tray app does (electron/main/index.ts): a notification for each renderComplete event, and
  // for a submission that failed before it made a job.
  const notify = trayNotifier();
  events = new DaemonEvents({
    connection: () => ({ origin: daemon.origin, token: daemon.token }),
    onEvent: (e) => {
      const n = notify(e);
      if (n) notifications.push(n);
    },
  });
  events.start();
}, 120_000);
afterAll(async () => {
  await events?.stop();
  await daemon?.close();
  await farm?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const WHAT_TO_DO = /failed on the farm, which gave no reason: look at the job there \(renderbridge jobs show [\w-]+/;

describe('a job the farm fails without a reason', () => {
  it('the daemon ends the submission JOB_FAILED saying what to do; the job failed; the tray says so', async () => {
    const call = daemonCall(daemon);
    const started = await call('POST', '/submissions', {
      pack: { path: zip },
      settings: { frames: ['1'] },
      download: false,
    });
    expect(started.status, started.text).toBe(202);
    const id = (started.json as Submission).id;
    const s = await waitUntil(
      'the submission to end',
      async () => {
        const got = (await call('GET', `/submissions/${id}`)).json as Submission;
        return got.step === 'failed' || got.step === 'done' ? got : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(s.step).toBe('failed');
    expect(s.error?.name, JSON.stringify(s.error)).toBe('JOB_FAILED');
    expect(s.error?.message).toMatch(WHAT_TO_DO);
    expect(s.error?.message).toContain(`renderbridge jobs show ${s.jobId}`);
    expect(s.error?.message).toMatch(/then submit again; if it fails again, ask the farm's operator why\.$/);
    expect(s.error?.message).not.toMatch(/service URL/);
    expect(farm.jobs.get(s.jobId!)).toMatchObject({ status: 'failed', failedReason: null });

    // The daemon's job list, which the job window and the add-on's Recent jobs show.
    const job = await waitUntil('the failed job in the daemon', async () => {
      const list = (await call('GET', '/jobs')).json as { jobs: TrackedJob[] };
      return list.jobs.find((j) => j.job.id === s.jobId && j.job.status === 'failed');
    });
    expect(job.job.failedReason ?? null).toBeNull();

    // A job exists: the tray notifies its renderComplete, not the submission.
    const failed = await waitUntil('the failure notification', () =>
      notifications.find((n) => n.title === 'Render failed'),
    );
    expect(failed).toMatchObject({ openPath: null, urgency: 'critical' });
    expect(failed.body).toMatch(WHAT_TO_DO);
    expect(failed.body).toContain(`renderbridge jobs show ${s.jobId}`);
    expect(failed.body).not.toMatch(/service URL|no reason given$/);
    expect(notifications.filter((n) => n.title === 'Not sent to the farm')).toEqual([]);
  }, 90_000);

  it('`renderbridge submit` exits 4 (render failed) and prints JOB_FAILED with what to do', async () => {
    const home = path.join(work, 'cli-home');
    const r = await runCli(['submit', zip, '--frames', '1', '--no-download'], {
      HOME: home,
      XDG_STATE_HOME: path.join(home, 'state'),
      XDG_CONFIG_HOME: path.join(home, 'config'),
      RENDERBRIDGE_SERVICE_URL: farm.baseUrl,
      RENDERBRIDGE_API_KEY: farm.apiKey,
      // No session bus: the OS keychain is unreachable, so the key comes from the environment.
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
    });
    expect(r.code, r.stderr).toBe(EXIT.RENDER_FAILED);
    expect(r.stderr).toMatch(
      /rendering failed \(job [\w-]+\): JOB_FAILED: Job [\w-]+ failed on the farm, which gave no reason/,
    );
    expect(r.stderr).toMatch(WHAT_TO_DO);
    expect(r.stderr).not.toMatch(/service URL/);
  }, 90_000);
});
