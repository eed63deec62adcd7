// A tray fed by a real daemon, as the tray app wires it (electron/main/index.ts): the bridge daemon
// (startBridgeDaemon, with downloads) on a reference service with a worker and real Blender, read
// through the tray's own SSE client (electron/core/daemon-events.ts), every event applied to the tray
// model and recorded with the menu, tooltip and notification it gave. Shared by models.test.ts and
// models-quiet.test.ts; the Electron tray cannot run here (no Electron binary).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startBridgeDaemon, type RunningBridgeDaemon } from '../../daemon/assemble.js';
import { defaultDaemonConfig } from '../../daemon/config.js';
import { DaemonEvents } from '../../electron/core/daemon-events.js';
import { trayNotifier, type NotificationModel } from '../../electron/core/notifications.js';
import {
  applyDaemonEvent,
  EMPTY_TRAY_STATE,
  trayIcon,
  trayMenu,
  trayStateFromJobs,
  type TrayMenuItem,
  type TrayState,
} from '../../electron/core/tray-model.js';
import type { DaemonStatus } from '../../electron/core/supervisor.js';
import type { RenderComplete } from '../../shared/daemon/job-schemas.js';
import type { Submission } from '../../shared/daemon/submission-schemas.js';
import { DaemonClient } from '../../shared/daemon/client.js';
import { startE2E, type E2E } from '../helpers/e2e.js';

export interface TrayRig {
  readonly daemon: RunningBridgeDaemon;
  /** Scratch folder of the file: packs, state and the daemon's outputs folder (`outputs`). */
  readonly work: string;
  /** The supervisor's status of the daemon as the tray shows it: running, in this process. */
  readonly running: DaemonStatus;
  /** The tray's state as the events so far left it. */
  readonly state: TrayState;
  /** Every notification the tray showed, in order. */
  notifications: NotificationModel[];
  completions: RenderComplete[];
  submissions: Submission[];
  /** The menu and the tooltip after each event. */
  menus: TrayMenuItem[][];
  tooltips: string[];
}

/** The labels of a menu, separators as '---'. */
export const labels = (menu: TrayMenuItem[]) => menu.map((i) => ('label' in i ? i.label : '---'));

/** Starts the service, worker, daemon and the tray's event client before the file's tests; stops them after. */
export function useTrayRig(): TrayRig {
  let e2e: E2E;
  let daemon: RunningBridgeDaemon;
  let events: DaemonEvents;
  let work: string;
  let state: TrayState = EMPTY_TRAY_STATE;
  const rec = {
    notifications: [] as NotificationModel[],
    completions: [] as RenderComplete[],
    submissions: [] as Submission[],
    menus: [] as TrayMenuItem[][],
    tooltips: [] as string[],
  };
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
        rec.menus.push(trayMenu(state, running, { outputsDir: config.downloadsDir }));
        rec.tooltips.push(trayIcon(state, running).tooltip);
        // As main/index.ts: a notification for each renderComplete,
        // and for a submission that failed before it made a job.
        if (e.event === 'renderComplete') rec.completions.push(e.data);
        if (e.event === 'submission') rec.submissions.push(e.data);
        const n = notify(e);
        if (n) rec.notifications.push(n);
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
  return {
    ...rec,
    get daemon() {
      return daemon;
    },
    get work() {
      return work;
    },
    get running() {
      return running;
    },
    get state() {
      return state;
    },
  };
}
