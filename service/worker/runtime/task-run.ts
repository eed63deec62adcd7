// One run of one claimed task: the job checked, placement asked, the handler run under a heartbeat
// that notices cancellation and kills the work at once (task-beats.ts), then the task completed or
// its failure settled (task-failure.ts), with the metrics and the task log that tell how it ended.
import type { Logger } from 'pino';
import { TERMINAL_STATUSES } from '../../../shared/job-status.js';
import type { TaskOutcome } from '../../metrics/registry.js';
import type { Task } from '../../ports/tasks.js';
import { CanceledTaskError, FatalTaskError } from './outcomes.js';
import type { Placement } from './placement.js';
import type { Lane, RuntimeDeps, RuntimeOptions, TaskHandler, TaskLogHandle } from './runtime.js';
import type { TaskBeats } from './task-beats.js';
import { settleFailure } from './task-failure.js';

interface Running {
  controller: AbortController;
  jobId: string;
}

export interface TaskRunnerDeps {
  deps: RuntimeDeps;
  opts: Required<RuntimeOptions>;
  handlers: Partial<Record<Task['kind'], TaskHandler>>;
  beats: TaskBeats;
  stopping: () => boolean;
  /** Wakes idle lanes: a task that ended may have enqueued work or freed the one another waited for. */
  kick: () => void;
}

export class TaskRunner {
  private readonly running = new Set<Running>();

  constructor(private readonly d: TaskRunnerDeps) {}

  /** Aborts this process's running tasks of `jobId` (every job's when absent). */
  abort(reason: CanceledTaskError, jobId?: string): void {
    for (const r of this.running) if (jobId === undefined || r.jobId === jobId) r.controller.abort(reason);
  }

  /** The lane's name in the blocklist and the task logs (`name/lane`), stable across restarts. */
  slotName(lane: Lane): string {
    return `${this.d.opts.workerName}/${lane.name}`;
  }

  async run(task: Task, lane: Lane, workerId: string, handedOff: () => void): Promise<void> {
    const { deps, opts } = this.d;
    const log = deps.log.child({ taskId: task.id, jobId: task.jobId, lane: lane.name, attempt: task.attempts });
    const handler = this.d.handlers[task.kind];
    const controller = new AbortController();
    const entry: Running = { controller, jobId: task.jobId };
    this.running.add(entry);
    const stopBeating = this.d.beats.start(task, workerId, controller, log);
    let startedAt: number | undefined;
    let outcome: TaskOutcome = 'failed';
    let taskLog: TaskLogHandle | undefined;
    let failure: unknown;
    let unhold = (): void => undefined;
    const oomBefore = deps.oomKills?.(lane);
    try {
      const job = await deps.jobs.getById(task.jobId);
      // A task whose job is gone or already final (canceled, failed) has nothing left to do.
      // A finalize that crashed after completing its job still owes the completion event.
      const owesCompletion = task.kind === 'finalize' && job?.job.status === 'completed';
      if (!job || (TERMINAL_STATUSES.has(job.job.status) && !owesCompletion)) {
        await deps.queue.complete(task.id, workerId);
        if (job && job.job.status !== 'completed') await this.jobStopped(task.jobId, log);
        return;
      }
      const facts = { memoryBytes: lane.slot?.memoryBytes, kind: lane.slot?.kind, job };
      if (await this.leftForOthers(task, lane, workerId, log, facts)) return;
      if (!handler)
        throw new FatalTaskError({
          name: 'NO_HANDLER',
          type: 'INTERNAL_ERROR',
          errorDetails: { message: `no handler for ${task.kind}` },
        });
      unhold = deps.placement?.hold(task, this.slotName(lane), facts) ?? unhold;
      taskLog = deps.openTaskLog?.(task, job, this.slotName(lane));
      taskLog?.note(`task ${task.id} (${task.kind}) attempt ${task.attempts} on ${this.slotName(lane)}`);
      log.info('task started');
      startedAt = Date.now();
      deps.metrics?.taskStarted(task.kind);
      deps.activity?.started(lane.name, task);
      await handler(task, { signal: controller.signal, lane, log, handedOff, job, ...(taskLog ? { taskLog } : {}) });
      // The log's end before the queue's: a remote worker's token stores only held tasks' logs.
      await endTaskLog(taskLog, 'done', undefined, log);
      await deps.queue.complete(task.id, workerId);
      outcome = 'done';
      log.info('task done');
      await this.stoppedMeanwhile(task, log);
      this.d.kick();
    } catch (err) {
      failure = err;
      outcome = await settleFailure(
        { ...deps, maxAttempts: opts.maxAttempts, retryBaseMs: opts.retryBaseMs },
        {
          task,
          slotName: this.slotName(lane),
          workerId,
          thrown: err,
          signal: controller.signal,
          log,
          stopping: this.d.stopping,
          jobStopped: () => this.jobStopped(task.jobId, log),
          slotMemoryBytes: lane.slot?.memoryBytes,
          oomKilled: () => oomBefore !== undefined && (deps.oomKills?.(lane) ?? 0) > oomBefore,
          ending: (end) => endTaskLog(taskLog, end, err, log),
        },
      );
    } finally {
      unhold();
      stopBeating();
      this.running.delete(entry);
      deps.activity?.ended(lane.name, task.id);
      if (startedAt !== undefined) {
        const frames = Array.isArray(task.payload.frames) ? task.payload.frames.length : 0;
        deps.metrics?.taskEnded(task.kind, outcome, (Date.now() - startedAt) / 1000, frames);
      }
      // Ended already unless settling the failure broke off before it knew the outcome: then it
      // says what the metrics say (a second close does nothing).
      await endTaskLog(taskLog, outcome, failure, log);
    }
  }

  /** Hands the task back when placement says another worker should run it; true when it did. */
  private async leftForOthers(
    task: Task,
    lane: Lane,
    workerId: string,
    log: Logger,
    facts: Parameters<Placement['refusal']>[2],
  ): Promise<boolean> {
    const refusal = await this.d.deps.placement?.refusal(task, this.slotName(lane), facts);
    if (!refusal) return false;
    log.info({ refusal }, 'task left for another worker');
    // The jitter breaks a phase lock: with a fixed delay, the refusing lane's own poll lands
    // just as the task is due again, every time, and a worker that can run it never gets it.
    const delayMs = this.d.opts.refusalDelayMs + Math.floor(Math.random() * this.d.opts.pollMs);
    await this.d.deps.queue.release(task.id, workerId, { delayMs });
    return true;
  }

  /**
   * A cancel that lands between a handler's end and its task's completion stops no handler, and the
   * job's other tasks leave the queue unclaimed: without this look its working files would stay.
   */
  private async stoppedMeanwhile(task: Task, log: Logger): Promise<void> {
    if (task.kind === 'finalize') return;
    await this.jobStopped(task.jobId, log).catch((err: unknown) =>
      log.warn({ err }, 'reading the job after its task was done'),
    );
  }

  private async jobStopped(jobId: string, log: Logger): Promise<void> {
    const job = await this.d.deps.jobs.getById(jobId);
    if (!job || (job.job.status !== 'canceled' && job.job.status !== 'failed')) return;
    await this.d.deps
      .onJobStopped?.(jobId)
      .catch((err: unknown) => log.warn({ err }, 'cleaning up a stopped job failed'));
  }
}

/**
 * Stores the run's log with how it ended. Called before the queue hears the outcome: a remote
 * worker's token stores only the logs of tasks it holds, so a log ended after the task is settled
 * is refused and read as `interrupted`. A log that cannot be stored never keeps the task from
 * being settled: a warning, and the task goes on. Never throws.
 */
async function endTaskLog(
  taskLog: TaskLogHandle | undefined,
  outcome: string,
  failure: unknown,
  log: Logger,
): Promise<void> {
  if (!taskLog) return;
  const message = failure === undefined ? undefined : String((failure as Error)?.message ?? failure).slice(0, 4000);
  try {
    await taskLog.close(outcome, message);
  } catch (err) {
    log.warn({ err }, 'ending the task log failed; the task is settled anyway');
  }
}
