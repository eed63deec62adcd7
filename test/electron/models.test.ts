// The tray's menu, tooltip and notifications (electron/core/tray-model.ts, notifications.ts) fed
// by a real daemon watching real jobs: the bridge daemon (startBridgeDaemon, with downloads) on a
// reference service with a worker and real Blender, read through the tray's own SSE client
// (electron/core/daemon-events.ts). One project renders eight frames into a chosen folder; another
// fails validation (two scenes in one archive); one renders with downloading off; one is canceled
// while it renders. The Electron tray cannot run here (no Electron binary): main/tray.ts and
// main/notifications.ts only hand these models to Electron, as main/index.ts does here.
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBridgeDaemon, type RunningBridgeDaemon } from '../../daemon/assemble.js';
import { defaultDaemonConfig } from '../../daemon/config.js';
import { DaemonEvents } from '../../electron/core/daemon-events.js';
import {
  notificationFor,
  submissionNotification,
  trayNotifier,
  type NotificationModel,
} from '../../electron/core/notifications.js';
import {
  applyDaemonEvent,
  EMPTY_TRAY_STATE,
  recentJobs,
  trayIcon,
  trayMenu,
  trayStateFromJobs,
  type TrayMenuItem,
  type TrayState,
} from '../../electron/core/tray-model.js';
import type { RenderComplete } from '../../shared/daemon/job-schemas.js';
import type { Submission } from '../../shared/daemon/submission-schemas.js';
import type { DaemonStatus } from '../../electron/core/supervisor.js';
import { DaemonClient } from '../../shared/daemon/client.js';
import { startE2E, waitUntil, type E2E } from '../helpers/e2e.js';
import { buildFixtureZip } from '../helpers/fixtures.js';
import { daemonCall } from '../daemon/harness.js';

let e2e: E2E;
let daemon: RunningBridgeDaemon;
let events: DaemonEvents;
let work: string;
let state: TrayState = EMPTY_TRAY_STATE;
const notifications: NotificationModel[] = [];
const completions: RenderComplete[] = [];
const submissions: Submission[] = [];
const menus: TrayMenuItem[][] = [];
const tooltips: string[] = [];
let running: DaemonStatus;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-tray-models-'));
  e2e = await startE2E();
  const config = defaultDaemonConfig(
    {},
    {
      serviceUrl: e2e.svc.baseUrl,
      port: 0,
      stateDir: path.join(work, 'state'),
      workDir: path.join(work, 'packs'),
      downloadsDir: path.join(work, 'outputs'),
      pollActiveMs: 250,
      pollIdleMs: 1000,
      hotFolder: null,
      webhookSecret: null,
    },
  );
  daemon = await startBridgeDaemon(config, {
    keychain: null,
    env: { RENDERBRIDGE_API_KEY: e2e.svc.apiKey },
    logger: false,
    version: '1.2.3-test',
  });
  running = {
    state: 'running',
    pid: process.pid,
    origin: daemon.origin,
    port: daemon.port,
    token: daemon.token,
    restarts: 0,
    lastExit: null,
    nextStartAt: null,
    external: false,
  };
  // What the tray app does (electron/main/index.ts): on each (re)connection re-read GET /jobs with
  // the typed client, then apply every event.
  const notify = trayNotifier();
  events = new DaemonEvents({
    connection: () => ({ origin: daemon.origin, token: daemon.token }),
    onOpen: (conn) => {
      void new DaemonClient(conn).listJobs().then(({ jobs }) => {
        state = trayStateFromJobs(jobs, state);
      });
    },
    onEvent: (e) => {
      state = applyDaemonEvent(state, e);
      menus.push(trayMenu(state, running, { outputsDir: config.downloadsDir }));
      tooltips.push(trayIcon(state, running).tooltip);
      // As main/index.ts: a notification for each renderComplete,
      // and for a submission that failed before it made a job.
      if (e.event === 'renderComplete') completions.push(e.data);
      if (e.event === 'submission') submissions.push(e.data);
      const n = notify(e);
      if (n) notifications.push(n);
    },
  });
  events.start();
}, 120_000);
afterAll(async () => {
  await events?.stop();
  await daemon?.close();
  await e2e?.svc.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const labels = (menu: TrayMenuItem[]) => menu.map((i) => ('label' in i ? i.label : '---'));

describe('tray models from a real daemon', () => {
  it('show the render in progress, then notify completion (outputs folder) and failure (reason)', async () => {
    const call = daemonCall(daemon);
    const good = path.join(work, 'good.zip');
    const ambiguous = path.join(work, 'two-scenes.zip');
    await buildFixtureZip(['basic'], good);
    await buildFixtureZip(['basic', 'compositor'], ambiguous, 'shot');
    const outDir = path.join(work, 'shot-010');
    const renderConfig = { resolution: [64, 48], sampleCount: 4, colorManagementPreset: 'default' };
    const started = await call('POST', '/submissions', {
      pack: { path: good },
      settings: { frames: ['1-8'], renderConfig },
      outDir,
    });
    expect(started.status, started.text).toBe(202);
    const failing = await call('POST', '/submissions', { pack: { path: ambiguous }, settings: { frames: ['1'] } });
    expect(failing.status, failing.text).toBe(202);

    const failed = await waitUntil(
      'the failure notification',
      () => notifications.find((n) => n.title === 'Render failed'),
      { timeoutMs: 120_000 },
    );
    expect(failed.body).toMatch(/failed — SCENE_FILE_AMBIGUOUS: .*pathToFileForRender/);
    expect(failed).toMatchObject({ openPath: null, urgency: 'critical' });

    const done = await waitUntil(
      'the completion notification',
      () => notifications.find((n) => n.title === 'Render complete'),
      { timeoutMs: 180_000 },
    );
    expect(done).toMatchObject({
      openPath: outDir,
      urgency: 'normal',
      body: `basic.blend is done. Click to open ${outDir}.`,
    });
    // Clicking opens that folder, which exists already: the eight frames land there.
    expect((await stat(outDir)).isDirectory()).toBe(true);
    const pngs = async () => (await readdir(outDir, { recursive: true })).filter((f) => f.endsWith('.png'));
    await waitUntil('the eight frames in the outputs folder', async () => (await pngs()).length === 8, {
      timeoutMs: 60_000,
    });
    expect(notifications).toHaveLength(2);

    // While it rendered, the menu listed it as active with its progress, and the tooltip said so.
    const activeLines = menus.flatMap(labels).filter((l) => l.startsWith('basic.blend — '));
    expect(
      activeLines.some((l) => /^basic\.blend — rendering( \d+%)? \(\d\/8 frames\)$/.test(l)),
      activeLines.join('\n'),
    ).toBe(true);
    expect(tooltips.some((t) => /^Renderbridge: basic\.blend rendering/.test(t))).toBe(true);

    // Now: no active job, both under Recent (completed opens its folder, failed says why).
    const menu = trayMenu(state, running, { outputsDir: path.join(work, 'outputs') });
    const l = labels(menu);
    expect(l[0]).toBe(`Daemon running (pid ${process.pid}, port ${daemon.port})`);
    expect(l).toContain('No active jobs');
    const recent = menu.filter((i) => i.kind === 'item' && /^(✓|✗) /.test(i.label));
    expect(recent).toHaveLength(2);
    expect(recent.find((i) => i.kind === 'item' && i.label === '✓ basic.blend — completed')).toMatchObject({
      action: { type: 'openFolder', path: outDir },
    });
    expect(
      recent.some(
        (i) =>
          i.kind === 'item' &&
          /^✗ two-scenes\.zip — failed: SCENE_FILE_AMBIGUOUS: The upload contains several \.blend files/.test(i.label),
      ),
      l.join('\n'),
    ).toBe(true);
    expect(l.slice(-6)).toEqual([
      'Open outputs folder',
      'Open job window',
      'Settings…',
      'Install the Blender add-on…',
      '---',
      'Quit Renderbridge',
    ]);
    expect(trayIcon(state, running)).toEqual({
      icon: 'idle',
      tooltip: `Renderbridge: Daemon running (pid ${process.pid}, port ${daemon.port}), no active jobs`,
    });
    // The daemon's own state shows through when it is not running.
    const crashed: DaemonStatus = { ...running, state: 'crashed', pid: null, lastExit: 'SIGKILL', restarts: 2 };
    expect(trayIcon(state, crashed)).toEqual({
      icon: 'error',
      tooltip: 'Renderbridge: Daemon stopped unexpectedly (SIGKILL); restarting (2 restarts)',
    });
    expect(
      trayMenu(state, crashed, { outputsDir: '/o' }).find((i) => i.kind === 'item' && i.label === 'Open job window'),
    ).toMatchObject({ enabled: false });
    expect(trayMenu(state, { ...running, external: true }, { outputsDir: '/o' })[0]).toEqual({
      kind: 'label',
      label: `Daemon running (pid ${process.pid}, port ${daemon.port}, started outside the app)`,
    });
  }, 300_000);

  it(
    'a render with downloading off notifies "Render complete" saying how to get its outputs; a canceled one ' +
      'notifies nothing',
    async () => {
      const call = daemonCall(daemon);
      const renderConfig = { resolution: [64, 48], sampleCount: 4, colorManagementPreset: 'default' };
      const jobOf = (id: string) =>
        waitUntil(
          `the job of submission ${id}`,
          async () => ((await call('GET', `/submissions/${id}`)).json as Submission).jobId ?? undefined,
          { timeoutMs: 120_000 },
        );
      const before = notifications.length;

      const kept = path.join(work, 'kept.zip');
      await buildFixtureZip(['basic'], kept, 'kept');
      const started = await call('POST', '/submissions', {
        pack: { path: kept },
        settings: { frames: ['1'], renderConfig },
        download: false,
      });
      expect(started.status, started.text).toBe(202);
      const keptJob = await jobOf((started.json as Submission).id);
      const done = await waitUntil('its renderComplete', () => completions.find((c) => c.jobId === keptJob), {
        timeoutMs: 180_000,
      });
      expect(done).toMatchObject({ status: 'completed', outDir: null });
      const n = notificationFor(done);
      expect(n).toEqual({
        title: 'Render complete',
        body:
          `basic.blend is done. Its outputs stay on the farm (not downloaded): get them with Download in the ` +
          `Blender add-on's Recent jobs, or renderbridge jobs download ${keptJob}.`,
        openPath: null,
        urgency: 'normal',
      });
      expect(notifications.slice(before)).toEqual([n]);
      // Under Recent it opens the job window (there is no folder to open).
      const recent = trayMenu(state, running, { outputsDir: path.join(work, 'outputs') }).filter(
        (i) => i.kind === 'item' && i.label === '✓ basic.blend — completed',
      );
      expect(recent).toContainEqual({
        kind: 'item',
        label: '✓ basic.blend — completed',
        enabled: true,
        action: { type: 'openJobWindow' },
      });

      // Long enough to be caught rendering: many frames at many samples.
      const long = path.join(work, 'long.zip');
      await buildFixtureZip(['basic'], long, 'long');
      const sent = await call('POST', '/submissions', {
        pack: { path: long },
        settings: { frames: ['1-250'], renderConfig: { ...renderConfig, sampleCount: 4096 } },
        outDir: path.join(work, 'long-out'),
      });
      expect(sent.status, sent.text).toBe(202);
      const subId = (sent.json as Submission).id;
      const longJob = await jobOf(subId);
      await waitUntil('the tray to show it rendering', () => state.jobs[longJob]?.job.status === 'rendering', {
        timeoutMs: 120_000,
      });
      expect(trayIcon(state, running).tooltip).toMatch(/^Renderbridge: basic\.blend rendering/);
      const canceled = await call('POST', `/jobs/${longJob}/cancel`);
      expect(canceled.status, canceled.text).toBe(200);
      // Its renderComplete and its failed submission are the events that could have notified.
      const end = await waitUntil('its renderComplete', () => completions.find((c) => c.jobId === longJob), {
        timeoutMs: 60_000,
      });
      expect(end.status).toBe('canceled');
      expect(notificationFor(end)).toBeNull();
      const sub = await waitUntil(
        'its submission to fail',
        () => submissions.find((x) => x.id === subId && x.step === 'failed'),
        { timeoutMs: 60_000 },
      );
      expect(sub.error?.name).toBe('JOB_CANCELED');
      expect(submissionNotification(sub)).toBeNull();
      expect(notifications.slice(before)).toEqual([n]);
      // Gone from the active jobs, and not listed under Recent (which lists what completed or failed).
      expect(labels(trayMenu(state, running, { outputsDir: '/o' }))).toContain('No active jobs');
      expect(recentJobs(state, 20).map((r) => r.job.id)).not.toContain(longJob);
      expect(trayIcon(state, running).icon).toBe('idle');
    },
    300_000,
  );
});
