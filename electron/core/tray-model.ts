// The tray's menu, icon and tooltip as pure functions of what the daemon said: jobs from
// GET /jobs and the `job`, `progress` and `renderComplete` events, the packs and uploads in
// progress (`pack` and `submission` events, transfers.ts), plus the supervisor's status.
// main/tray.ts only turns the model into an Electron Menu; tests check the model itself.
import type { DaemonEvent } from '../../shared/daemon/api.js';
import type { RenderComplete, TrackedJob } from '../../shared/daemon/job-schemas.js';
import type { Job } from '../../shared/api/job.js';
import { ACTIVE_STATUSES } from '../../shared/job-status.js';
import type { DaemonStatus } from './supervisor.js';
import { activeTransfers, applyTransferEvent, NO_TRANSFERS, transferLabel, type Transfers } from './transfers.js';

export interface TrayState {
  /** Every job the daemon reported, by id. */
  jobs: Readonly<Record<string, TrackedJob>>;
  /** renderComplete events seen, newest first, one per job. */
  finished: readonly RenderComplete[];
  /** Packs and submissions packing or uploading now. */
  transfers: Transfers;
}

export const EMPTY_TRAY_STATE: TrayState = { jobs: {}, finished: [], transfers: NO_TRANSFERS };

/**
 * A fresh state from `GET /jobs` (after a (re)connection), keeping the renderComplete
 * events and transfers already seen.
 */
export function trayStateFromJobs(jobs: readonly TrackedJob[], previous: TrayState = EMPTY_TRAY_STATE): TrayState {
  return {
    jobs: Object.fromEntries(jobs.map((t) => [t.job.id, t])),
    finished: previous.finished,
    transfers: previous.transfers,
  };
}

/** The state after one daemon event. */
export function applyDaemonEvent(state: TrayState, e: DaemonEvent, maxFinished = 20): TrayState {
  switch (e.event) {
    case 'job':
      return { ...state, jobs: { ...state.jobs, [e.data.job.id]: e.data } };
    case 'progress': {
      const known = state.jobs[e.data.jobId];
      return known ? { ...state, jobs: { ...state.jobs, [e.data.jobId]: { ...known, progress: e.data } } } : state;
    }
    case 'renderComplete': {
      const known = state.jobs[e.data.jobId];
      const job: TrackedJob = { job: e.data.job, progress: known?.progress ?? null, download: known?.download ?? null };
      const finished = [e.data, ...state.finished.filter((f) => f.jobId !== e.data.jobId)].slice(0, maxFinished);
      return { ...state, jobs: { ...state.jobs, [e.data.jobId]: job }, finished };
    }
    case 'download': {
      const known = state.jobs[e.data.jobId];
      return known ? { ...state, jobs: { ...state.jobs, [e.data.jobId]: { ...known, download: e.data } } } : state;
    }
    case 'pack':
    case 'submission':
      return { ...state, transfers: applyTransferEvent(state.transfers, e) };
    default:
      return state;
  }
}

export type TrayAction =
  | { type: 'openFolder'; path: string }
  | { type: 'openLog'; path: string }
  | { type: 'openJobWindow' }
  | { type: 'openSettings' }
  | { type: 'showAddon' }
  | { type: 'quit' };

export type TrayMenuItem =
  | { kind: 'separator' }
  | { kind: 'label'; label: string }
  | { kind: 'item'; label: string; enabled: boolean; action: TrayAction };

export interface TrayModelOptions {
  /** Parent of the per-job output folders (the daemon's downloads folder). */
  outputsDir: string;
  /** Recent completed/failed jobs shown. Default 5. */
  recent?: number;
  /** The daemon's log file (core/daemon-log.ts), offered as "Open daemon log". Default: no such item. */
  daemonLog?: string;
}

/** A short name for a job: its scene file, else the start of its id. */
export function jobName(job: Job): string {
  return job.sceneFile?.name ?? `job ${job.id.slice(0, 8)}`;
}

/** The failure reason a person can read: the service's message, else the reason's name. */
export function failureText(job: Job): string {
  const r = job.failedReason;
  if (!r) return 'no reason given';
  const message = r.errorDetails.message;
  return typeof message === 'string' && message ? `${r.name}: ${message}` : r.name;
}

/** "rendering 40% (4/10 frames)" */
export function progressText(t: TrackedJob): string {
  const p = t.progress;
  const parts: string[] = [t.job.status];
  if (p?.percent != null) parts.push(`${Math.round(p.percent)}%`);
  if (p?.framesTotal) parts.push(`(${p.framesDone ?? 0}/${p.framesTotal} frames)`);
  return parts.join(' ');
}

/** Active jobs (validating to finalizing), newest first. */
export function activeJobs(state: TrayState): TrackedJob[] {
  return Object.values(state.jobs)
    .filter((t) => ACTIVE_STATUSES.has(t.job.status))
    .sort((a, b) => b.job.createdAt.localeCompare(a.job.createdAt));
}

interface RecentJob {
  job: Job;
  outDir: string | null;
}

/** Completed and failed jobs, most recently finished first (renderComplete events, then GET /jobs). */
export function recentJobs(state: TrayState, limit = 5): RecentJob[] {
  const seen = new Set<string>();
  const out: RecentJob[] = [];
  for (const f of state.finished) {
    if (f.status === 'canceled' || seen.has(f.jobId)) continue;
    seen.add(f.jobId);
    out.push({ job: f.job, outDir: f.outDir ?? state.jobs[f.jobId]?.download?.outDir ?? null });
  }
  const listed = Object.values(state.jobs)
    .filter((t) => !seen.has(t.job.id) && (t.job.status === 'completed' || t.job.status === 'failed'))
    .sort((a, b) => b.job.updatedAt.localeCompare(a.job.updatedAt));
  for (const t of listed) out.push({ job: t.job, outDir: t.download?.outDir ?? null });
  return out.slice(0, limit);
}

export function trayMenu(state: TrayState, daemon: DaemonStatus, options: TrayModelOptions): TrayMenuItem[] {
  const items: TrayMenuItem[] = [{ kind: 'label', label: daemonLine(daemon) }, { kind: 'separator' }];
  const sending = activeTransfers(state.transfers);
  if (sending.length) {
    items.push({ kind: 'label', label: `Sending (${sending.length})` });
    for (const t of sending)
      items.push({ kind: 'item', label: transferLabel(t), enabled: true, action: { type: 'openJobWindow' } });
    items.push({ kind: 'separator' });
  }
  const active = activeJobs(state);
  items.push({ kind: 'label', label: active.length ? `Active jobs (${active.length})` : 'No active jobs' });
  for (const t of active)
    items.push({
      kind: 'item',
      label: `${jobName(t.job)} — ${progressText(t)}`,
      enabled: true,
      action: { type: 'openJobWindow' },
    });
  const recent = recentJobs(state, options.recent ?? 5);
  if (recent.length) {
    items.push({ kind: 'separator' }, { kind: 'label', label: 'Recent' });
    for (const r of recent) {
      if (r.job.status === 'completed') {
        items.push(
          r.outDir
            ? {
                kind: 'item',
                label: `✓ ${jobName(r.job)} — completed`,
                enabled: true,
                action: { type: 'openFolder', path: r.outDir },
              }
            : {
                kind: 'item',
                label: `✓ ${jobName(r.job)} — completed`,
                enabled: true,
                action: { type: 'openJobWindow' },
              },
        );
      } else {
        items.push({
          kind: 'item',
          label: `✗ ${jobName(r.job)} — failed: ${failureText(r.job)}`,
          enabled: true,
          action: { type: 'openJobWindow' },
        });
      }
    }
  }
  items.push(
    { kind: 'separator' },
    {
      kind: 'item',
      label: 'Open outputs folder',
      enabled: true,
      action: { type: 'openFolder', path: options.outputsDir },
    },
    ...(options.daemonLog
      ? [
          {
            kind: 'item',
            label: 'Open daemon log',
            enabled: true,
            action: { type: 'openLog', path: options.daemonLog },
          } as const,
        ]
      : []),
    { kind: 'item', label: 'Open job window', enabled: daemon.state === 'running', action: { type: 'openJobWindow' } },
    { kind: 'item', label: 'Settings…', enabled: true, action: { type: 'openSettings' } },
    { kind: 'item', label: 'Install the Blender add-on…', enabled: true, action: { type: 'showAddon' } },
    { kind: 'separator' },
    { kind: 'item', label: 'Quit Renderbridge', enabled: true, action: { type: 'quit' } },
  );
  return items;
}

function daemonLine(d: DaemonStatus): string {
  switch (d.state) {
    case 'running':
      return `Daemon running (pid ${d.pid}, port ${d.port}${d.external ? ', started outside the app' : ''})`;
    case 'starting':
      return 'Daemon starting…';
    case 'crashed':
      return `Daemon stopped unexpectedly (${d.lastExit ?? 'unknown'}); restarting`;
    default:
      return 'Daemon stopped';
  }
}

export type TrayIcon = 'idle' | 'busy' | 'error' | 'stopped';

/** The icon and tooltip: the daemon's state first, then what is being sent, then what renders. */
export function trayIcon(state: TrayState, daemon: DaemonStatus): { icon: TrayIcon; tooltip: string } {
  if (daemon.state === 'crashed')
    return { icon: 'error', tooltip: `Renderbridge: ${daemonLine(daemon)} (${daemon.restarts} restarts)` };
  if (daemon.state !== 'running') return { icon: 'stopped', tooltip: `Renderbridge: ${daemonLine(daemon)}` };
  const sending = activeTransfers(state.transfers);
  if (sending.length) {
    const more = sending.length > 1 ? ` (+${sending.length - 1} more)` : '';
    return { icon: 'busy', tooltip: `Renderbridge: ${transferLabel(sending[0]!)}${more}` };
  }
  const active = activeJobs(state);
  if (!active.length) return { icon: 'idle', tooltip: `Renderbridge: ${daemonLine(daemon)}, no active jobs` };
  const first = active[0]!;
  const more = active.length > 1 ? ` (+${active.length - 1} more)` : '';
  return { icon: 'busy', tooltip: `Renderbridge: ${jobName(first.job)} ${progressText(first)}${more}` };
}
