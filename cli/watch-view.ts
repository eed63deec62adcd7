// What `renderbridge jobs watch` prints: one line redrawn in place on a terminal, or a line per
// change (status or frames done) in a log, each with the rate in frames/min and the ETA (with
// its band where the service has the frame-stats extension).
import type { EtaBand } from '../shared/api/frame-stats.js';
import type { Job } from '../shared/api/job.js';
import type { JobProgress } from '../shared/api/progress.js';

/** The progress as GET /jobs/{id}/progress answers it: `etaBand` only from a service with frame-stats. */
export type WatchedProgress = JobProgress & { etaBand?: EtaBand | null };

export interface WatchView {
  update(job: Job, progress: WatchedProgress | null): void;
  stop(): void;
}

export interface WatchViewOptions {
  /** Redraw one line (a terminal) rather than append lines (a log or a pipe). */
  live: boolean;
  /** --json or --quiet: nothing while watching. */
  silent: boolean;
  stream?: NodeJS.WritableStream;
  now?: () => number;
}

/**
 * Frames per minute since the first frame this watch saw finish: measured here rather than
 * taken from the service, so it means "how fast right now" even for a job that waited in a queue.
 */
export function createRate(now: () => number = Date.now): (framesDone: number) => number | null {
  let first: { at: number; done: number } | undefined;
  return (done) => {
    const t = now();
    if (!first || done < first.done) first = { at: t, done };
    const minutes = (t - first.at) / 60_000;
    return minutes > 0 && done > first.done ? (done - first.done) / minutes : null;
  };
}

export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h}h${String(m).padStart(2, '0')}m`;
  return m > 0 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

export function watchLine(job: Job, p: WatchedProgress | null, rate: number | null): string {
  const total = p?.framesTotal ?? null;
  const done = p?.framesDone ?? 0;
  const parts = [`${job.id.slice(0, 8)} ${job.status}`];
  if (total !== null) parts.push(`${done}/${total} frames${p?.percent != null ? ` (${p.percent.toFixed(0)}%)` : ''}`);
  if (p?.framesFailed) parts.push(`${p.framesFailed} failed`);
  parts.push(rate !== null ? `${rate.toFixed(1)} frames/min` : 'rate: -');
  const band = p?.etaBand;
  const eta = band?.seconds ?? p?.etaSeconds ?? (rate && total !== null ? ((total - done) / rate) * 60 : null);
  // The band says how far to trust the figure: "ETA 4m10s (3m20s-5m30s)".
  const range =
    band && band.seconds > 0 ? ` (${formatDuration(band.lowSeconds)}-${formatDuration(band.highSeconds)})` : '';
  parts.push(eta !== null ? `ETA ${formatDuration(eta)}${range}` : 'ETA: -');
  return parts.join('  ');
}

export function createWatchView(options: WatchViewOptions): WatchView {
  const stream = options.stream ?? process.stdout;
  const rate = createRate(options.now);
  let last = '';
  let key = '';
  let drawn = false;
  return {
    update: (job, p) => {
      const line = watchLine(job, p, rate(p?.framesDone ?? 0));
      if (options.silent) return;
      if (options.live) {
        if (line !== last) stream.write(`\r\x1b[K${line}`);
        drawn = true;
      } else {
        // A log gets a line when something a reader cares about moved, not every poll.
        const k = `${job.status}/${p?.framesDone ?? 0}/${p?.framesFailed ?? 0}`;
        if (k !== key) stream.write(`${new Date((options.now ?? Date.now)()).toISOString()} ${line}\n`);
        key = k;
      }
      last = line;
    },
    stop: () => {
      if (drawn) stream.write('\n');
      drawn = false;
    },
  };
}
