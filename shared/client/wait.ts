// Polling a job until it reaches a wanted status. `data.status` of GET /jobs/{id} is the spec's
// workflow signal, so this is the one call polled; progress counters never replace it.
import type { Job } from '../api/job.js';
import { TERMINAL_STATUSES, type JobStatus } from '../job-status.js';
import { sleep } from './backoff.js';
import { JobStoppedError, WaitTimeoutError } from './errors.js';

export interface WaitOptions {
  /** Pause between two polls. Default: 2000. */
  intervalMs?: number;
  /**
   * Pause before the second poll; each later pause is 1.5 times the one before, up to
   * `intervalMs`. For a state that usually comes within a second or two (validation of a scene
   * analysed before): it is seen within a fraction of a second, for a few more requests. Default:
   * `intervalMs` (even polling).
   */
  firstIntervalMs?: number;
  /** Give up with WaitTimeoutError after this long. Default: no limit. */
  timeoutMs?: number;
  /** Stops waiting (and the poll in flight) with the signal's reason. */
  signal?: AbortSignal;
  /** Called with every job state polled, the final one included. */
  onUpdate?: (job: Job) => void;
}

export type GetJob = (id: string, options: { signal: AbortSignal | undefined }) => Promise<Job>;

export const DEFAULT_WAIT_INTERVAL_MS = 2000;

/**
 * Polls until the job's status is one of `targets` and resolves with that job. Throws
 * JobStoppedError when the job reaches a final state (completed, failed, canceled) that is not a
 * target: nothing will move it on, and clients must stop on failed or canceled.
 */
export async function waitForStatus(
  getJob: GetJob,
  id: string,
  targets: readonly JobStatus[],
  options: WaitOptions = {},
): Promise<Job> {
  if (targets.length === 0) throw new TypeError('waitForStatus needs at least one target status');
  const intervalMs = options.intervalMs ?? DEFAULT_WAIT_INTERVAL_MS;
  let pauseMs = Math.min(intervalMs, options.firstIntervalMs ?? intervalMs);
  let lastJob: Job | undefined;
  // The deadline aborts the poll in flight too, so a hanging request cannot outlive timeoutMs.
  const deadline = new AbortController();
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => deadline.abort(new WaitTimeoutError(id, options.timeoutMs ?? 0, lastJob)), options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
  try {
    for (;;) {
      signal.throwIfAborted();
      const job = await getJob(id, { signal });
      lastJob = job;
      options.onUpdate?.(job);
      if (targets.includes(job.status)) return job;
      if (TERMINAL_STATUSES.has(job.status)) throw new JobStoppedError(job, targets);
      await sleep(pauseMs, signal);
      pauseMs = Math.min(intervalMs, pauseMs * 1.5);
    }
  } finally {
    clearTimeout(timer);
  }
}
