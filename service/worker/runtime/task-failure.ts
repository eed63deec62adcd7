// What a failed task run means for its task and job: a stop (canceled, or the worker stopping)
// gives the task back or leaves it; a retryable failure counts towards the per-job blocklist
// and runs again after a back-off until the attempts are spent; then, or at once for a fatal
// one, the job fails with a failedReason fit for clients. The lanes that run tasks: runtime.ts.
import type { Logger } from 'pino';
import type { WorkerJobStore } from '../../ports/jobs.js';
import type { Task, TaskLeases, TaskSubmitter } from '../../ports/tasks.js';
import { moveJob } from '../../domain/job-lifecycle.js';
import type { TaskOutcome } from '../../metrics/registry.js';
import { failedReasonOf, redactPaths } from './failed-reason.js';
import { asTaskOutcome, CanceledTaskError, DeferTaskError, FatalTaskError } from './outcomes.js';
import type { Placement } from './placement.js';
import { outOfMemoryOf, settleOutOfMemory, type OomDeps } from './oom-failure.js';

export interface FailureDeps {
  jobs: WorkerJobStore;
  queue: TaskLeases & Pick<TaskSubmitter, 'cancelJob'>;
  /** Counts retryable failures for the per-job blocklist. Default: none counted. */
  placement?: Placement;
  /** Worker-local folders replaced in a failedReason. Default none. */
  privatePaths?: readonly string[];
  /** Attempts a task gets, the first run included (RuntimeOptions.maxAttempts). */
  maxAttempts: number;
  /** Back-off before a retry: base * 2^(attempt-1) (RuntimeOptions.retryBaseMs). */
  retryBaseMs: number;
  /** How a frame that ran out of memory is retried (oom-failure.ts). Default none: like any crash. */
  memory?: Pick<OomDeps, 'fit' | 'ownSlots'>;
}

export interface FailedRun {
  task: Task;
  /** The lane's name in the blocklist (`worker/lane`). */
  slotName: string;
  workerId: string;
  thrown: unknown;
  /** The run's signal: aborted when the job was canceled or the worker is stopping. */
  signal: AbortSignal;
  log: Logger;
  /** Whether the worker is stopping (its tasks go back untouched). */
  stopping: () => boolean;
  /** Cleans up after the job when it ended canceled or failed. */
  jobStopped: () => Promise<void>;
  /** The memory of the slot it ran in, bytes. Default unknown. */
  slotMemoryBytes?: number;
  /** Whether the kernel killed a process for memory in the slot's cgroup while the task ran. Default never. */
  oomKilled?: () => boolean;
  /**
   * Told the outcome once it is known, before the queue or the job hears it (the runtime ends the
   * task log there: a remote worker's token writes only the logs of tasks it still holds). Never
   * throws. Default: nothing.
   */
  ending?: (outcome: TaskOutcome) => Promise<void>;
}

/** Records how the run failed (release, retry or fail the job) and answers the outcome for /metrics. Never throws. */
export async function settleFailure(deps: FailureDeps, run: FailedRun): Promise<TaskOutcome> {
  const { queue, jobs } = deps;
  const { task, workerId, signal, log } = run;
  const err = asTaskOutcome(run.thrown);
  try {
    if (err instanceof CanceledTaskError || (signal.aborted && !(err instanceof FatalTaskError))) {
      // Canceled: the task is already out of the queue. Stopping: give the task back untouched.
      // A restart is not the task's fault: its attempt does not count.
      const stopped = run.stopping();
      await run.ending?.(stopped ? 'released' : 'canceled');
      if (stopped) await queue.release(task.id, workerId);
      else await run.jobStopped();
      log.info({ reason: String(signal.reason ?? err) }, 'task stopped');
      return stopped ? 'released' : 'canceled';
    }
    if (err instanceof DeferTaskError) {
      const waitFor = err.waitFor.length ? { waitFor: err.waitFor } : {};
      await run.ending?.('released');
      await queue.release(task.id, workerId, { delayMs: err.delayMs, ...waitFor });
      log.debug({ delayMs: err.delayMs, reason: err.message, ...waitFor }, 'task deferred');
      return 'released';
    }
    const oom = deps.memory ? outOfMemoryOf(err, run.oomKilled?.() ?? false) : undefined;
    if (oom && deps.memory) {
      return await settleOutOfMemory(
        { ...deps, ...deps.memory },
        { ...run, slotMemoryBytes: run.slotMemoryBytes },
        oom,
      );
    }
    const retryable = !(err instanceof FatalTaskError);
    if (retryable) {
      const count = await deps.placement?.failed(task, run.slotName);
      if (count !== undefined) log.info({ failuresOnJob: count }, 'failure counted for the per-job blocklist');
    }
    if (retryable && task.attempts < deps.maxAttempts) {
      const retryAfterMs = deps.retryBaseMs * 2 ** (task.attempts - 1);
      log.warn({ err, retryAfterMs }, 'task failed; will retry');
      await run.ending?.('retried');
      await queue.fail(task.id, workerId, {
        retryable: true,
        message: String((err as Error).message ?? err),
        retryAfterMs,
      });
      return 'retried';
    }
    const reason = redactPaths(failedReasonOf(err, task), deps.privatePaths ?? []);
    log.error({ err, failedReason: reason }, 'task failed for good; failing the job');
    // The job first, while this worker still holds the task: a
    // remote worker's token opens only the jobs of its leases.
    await run.ending?.('failed');
    await moveJob(jobs, task.jobId, 'fail', { failedReason: reason });
    await queue.fail(task.id, workerId, {
      retryable: false,
      message: String(reason.errorDetails.message ?? reason.name),
    });
    await queue.cancelJob(task.jobId);
    await run.jobStopped();
  } catch (inner) {
    log.error({ err: inner }, 'recording a task failure failed; the lease will run out and the task return');
  }
  return 'failed';
}
