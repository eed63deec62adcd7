// The worker runtime: lanes that claim tasks from the queue and run their handlers. One control
// lane runs the short CPU tasks (validate, plan a render, finalize); one render lane per slot
// (GPU, or the CPU) runs render chunks. A claimed task is a lease, kept by a heartbeat that also
// notices cancellation and kills the work at once (task-beats.ts); what a failed run means for its
// task and job is task-failure.ts.
import os from 'node:os';
import type { Logger } from 'pino';
import { TERMINAL_STATUSES } from '../../../shared/job-status.js';
import type { JobRecord, WorkerJobStore } from '../../ports/jobs.js';
import type { Task, TaskKind, TaskLeases, TaskSubmitter } from '../../ports/tasks.js';
import type { Slot } from './devices.js';
import { CanceledTaskError, FatalTaskError } from './outcomes.js';
import { settleFailure, type FailureDeps } from './task-failure.js';
import type { TaskOutcome, WorkerMetrics } from '../../metrics/registry.js';
import type { Placement } from './placement.js';
import { IdleLanes } from './idle-lanes.js';
import { TaskBeats } from './task-beats.js';
import type { TaskLogLines } from '../logs/task-log.js';
import type { LaneActivity } from './activity.js';

export interface TaskContext {
  /** Fires when the job is canceled, the lease is lost or the runtime stops. */
  signal: AbortSignal;
  /** The lane running the task: its slot says which device a render chunk uses. */
  lane: Lane;
  log: Logger;
  /** The task's job as the runtime read it just before starting the task (a handler need not read it again). */
  job: JobRecord;
  /**
   * Says the task's work is queued on its device (a frame handed to a warm Blender): a lane of
   * depth > 1 claims its next task now, so the device goes on without waiting for the queue.
   */
  handedOff(): void;
  /** The log of this run of the task (extension task-logs): program output and notes. Absent: not kept. */
  taskLog?: TaskLogLines;
}

/** A task run's log as the runtime holds it: written by the handler, ended by the runtime. */
export interface TaskLogHandle extends TaskLogLines {
  /** Stores the capped log with how the run ended (done, failed, retried, canceled, released); never throws. */
  close(outcome: string, message?: string): Promise<void>;
}

export type TaskHandler = (task: Task, ctx: TaskContext) => Promise<void>;

export interface Lane {
  name: string;
  kinds: readonly TaskKind[];
  /** The render slot (render lanes only): its GPUs and thread share. */
  slot?: Slot;
  /**
   * Tasks the lane holds at once. Above 1, it claims the next task as soon as the running one
   * says its work is handed off (TaskContext.handedOff), never before. Default 1.
   */
  depth?: number;
}

export interface RuntimeOptions {
  /** How long a claim lasts without a heartbeat. Default 30000 ms: a dead worker's task returns within it. */
  leaseMs?: number;
  /**
   * Heartbeat period: the cancel check every beat, and the lease extension once a quarter of the
   * lease less a beat has passed since the last one (task-beats.ts). Default 500 ms, the upper bound
   * on cancel latency across processes.
   */
  heartbeatMs?: number;
  /** Idle poll period of an empty queue. Default 200 ms. */
  pollMs?: number;
  /**
   * Attempts a task gets, the first run included: a retryable failure (crash, hang) is retried
   * until this many attempts failed, then fails the job (RETRIES_EXHAUSTED, `errorDetails.attempts`).
   * Default 3: the first run and 2 retries. A fatal failure (BLENDER_FAILED) is never retried.
   */
  maxAttempts?: number;
  /** Back-off before a retry: base * 2^(attempt-1). Default 1000 ms. */
  retryBaseMs?: number;
  /** Identifies this process in task leases. Default `host:pid`. */
  workerId?: string;
  /** Names this machine in the per-job blocklist, stable across restarts (`name/lane`). Default the host name. */
  workerName?: string;
  /**
   * How long a task this worker leaves for others stays out of reach, plus up to one poll
   * interval at random. Default 2000 ms.
   */
  refusalDelayMs?: number;
}

interface Running {
  controller: AbortController;
  jobId: string;
}

export class WorkerRuntime {
  private readonly opts: Required<RuntimeOptions>;
  private readonly running = new Set<Running>();
  private stopping = false;
  private loops: Promise<void>[] = [];
  private readonly idle = new IdleLanes();
  private unsubscribe: (() => void) | undefined;
  private readonly beats: TaskBeats;

  constructor(
    private readonly deps: {
      jobs: WorkerJobStore;
      /** Runs tasks; drops a job's other tasks when one of them fails it. */
      queue: TaskLeases & Pick<TaskSubmitter, 'cancelJob'>;
      log: Logger;
      /** Called when a job ended canceled or failed under this worker (to remove its working files). */
      onJobStopped?: (jobId: string) => Promise<void>;
      /** Worker-local folders never shown to clients: replaced in a failedReason (Blender's last lines name them). */
      privatePaths?: readonly string[];
      /** Decides which claimed tasks this worker leaves for others (requirements, blocklist). Default: runs all. */
      placement?: Placement;
      /** Task counts and durations for /metrics. Default none. */
      metrics?: WorkerMetrics;
      /** Opens the log of a task run (`worker` names the slot). Default none: no task logs. */
      openTaskLog?: (task: Task, job: JobRecord, worker: string) => TaskLogHandle;
      /** Told when a task's handler starts and ends (the heartbeat's slot states). Default none. */
      activity?: LaneActivity;
      /** Retries of frames that ran out of memory (oom-failure.ts). Default none: like any crash. */
      memory?: FailureDeps['memory'];
      /** OOM kills the kernel counted so far in a lane's memory cgroup. Default none: only Blender's words count. */
      oomKills?: (lane: Lane) => number;
    },
    private readonly lanes: readonly Lane[],
    private readonly handlers: Partial<Record<TaskKind, TaskHandler>>,
    opts: RuntimeOptions = {},
  ) {
    this.opts = {
      leaseMs: opts.leaseMs ?? 30_000,
      heartbeatMs: opts.heartbeatMs ?? 500,
      pollMs: opts.pollMs ?? 200,
      maxAttempts: opts.maxAttempts ?? 3,
      retryBaseMs: opts.retryBaseMs ?? 1000,
      workerId: opts.workerId ?? `${os.hostname()}:${process.pid}`,
      workerName: opts.workerName ?? os.hostname(),
      refusalDelayMs: opts.refusalDelayMs ?? 2000,
    };
    this.beats = new TaskBeats(deps, this.opts);
  }

  start(): void {
    // Another process made a task claimable: one idle lane of its kind claims now.
    this.unsubscribe = this.deps.queue.onReady?.((kind) => this.idle.wakeOne(kind));
    this.loops = this.lanes.map((lane) => this.loop(lane));
  }

  /** Wakes idle lanes now (a task was just enqueued in this process). */
  kick(): void {
    this.idle.wakeAll();
  }

  /** Stops this process's work on a job now (it was canceled); other processes notice by heartbeat. */
  cancelJob(jobId: string): void {
    for (const r of this.running) if (r.jobId === jobId) r.controller.abort(new CanceledTaskError('job canceled'));
  }

  /** Stops claiming, aborts running work (its tasks go back to the queue) and waits for the lanes. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    this.kick();
    for (const r of this.running) r.controller.abort(new CanceledTaskError('worker stopping'));
    await Promise.all(this.loops);
  }

  private async loop(lane: Lane): Promise<void> {
    const workerId = `${this.opts.workerId}:${lane.name}`;
    const depth = Math.max(1, Math.trunc(lane.depth ?? 1));
    const inFlight = new Set<Promise<void>>();
    while (!this.stopping) {
      if (inFlight.size >= depth) {
        await Promise.race(inFlight);
        continue;
      }
      let task: Task | undefined;
      try {
        task = await this.idle.claiming(lane.kinds, () =>
          this.deps.queue.claim(workerId, lane.kinds, this.opts.leaseMs),
        );
      } catch (err) {
        this.deps.log.error({ err, lane: lane.name }, 'claiming a task failed');
      }
      if (!task) {
        // A task ending frees room too: claim again at once, not at the next poll. The period is
        // jittered (0.5x to 1.5x): workers woken by the same signal otherwise poll in lockstep, and
        // at a task's due time the same one always claims first (a blocklisted slot that takes a
        // task back every time starved the one slot able to run it).
        const pollMs = Math.round(this.opts.pollMs * (0.5 + Math.random()));
        await this.idle.wait(lane.kinds, pollMs, inFlight.size > 0 ? Promise.race(inFlight) : undefined);
        continue;
      }
      let handOff!: () => void;
      const handedOff = new Promise<void>((resolve) => (handOff = resolve));
      const running: Promise<void> = this.run(task, lane, workerId, () => handOff()).finally(() => {
        inFlight.delete(running);
        handOff();
      });
      inFlight.add(running);
      await handedOff;
    }
    await Promise.all(inFlight);
  }

  private async run(task: Task, lane: Lane, workerId: string, handedOff: () => void): Promise<void> {
    const log = this.deps.log.child({ taskId: task.id, jobId: task.jobId, lane: lane.name, attempt: task.attempts });
    const handler = this.handlers[task.kind];
    const controller = new AbortController();
    const entry: Running = { controller, jobId: task.jobId };
    this.running.add(entry);
    const stopBeating = this.beats.start(task, workerId, controller, log);
    let startedAt: number | undefined;
    let outcome: TaskOutcome = 'failed';
    let taskLog: TaskLogHandle | undefined;
    let failure: unknown;
    let unhold = (): void => undefined;
    const oomBefore = this.deps.oomKills?.(lane);
    try {
      const job = await this.deps.jobs.getById(task.jobId);
      // A task whose job is gone or already final (canceled, failed) has nothing left to do.
      // A finalize that crashed after completing its job still owes the completion event.
      const owesCompletion = task.kind === 'finalize' && job?.job.status === 'completed';
      if (!job || (TERMINAL_STATUSES.has(job.job.status) && !owesCompletion)) {
        await this.deps.queue.complete(task.id, workerId);
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
      unhold = this.deps.placement?.hold(task, this.slotName(lane), facts) ?? unhold;
      taskLog = this.deps.openTaskLog?.(task, job, this.slotName(lane));
      taskLog?.note(`task ${task.id} (${task.kind}) attempt ${task.attempts} on ${this.slotName(lane)}`);
      log.info('task started');
      startedAt = Date.now();
      this.deps.metrics?.taskStarted(task.kind);
      this.deps.activity?.started(lane.name, task);
      await handler(task, { signal: controller.signal, lane, log, handedOff, job, ...(taskLog ? { taskLog } : {}) });
      await this.deps.queue.complete(task.id, workerId);
      outcome = 'done';
      log.info('task done');
      // The task may have enqueued work or been the last one another task waited for.
      this.kick();
    } catch (err) {
      failure = err;
      outcome = await settleFailure(
        { ...this.deps, maxAttempts: this.opts.maxAttempts, retryBaseMs: this.opts.retryBaseMs },
        {
          task,
          slotName: this.slotName(lane),
          workerId,
          thrown: err,
          signal: controller.signal,
          log,
          stopping: () => this.stopping,
          jobStopped: () => this.jobStopped(task.jobId, log),
          slotMemoryBytes: lane.slot?.memoryBytes,
          oomKilled: () => oomBefore !== undefined && (this.deps.oomKills?.(lane) ?? 0) > oomBefore,
        },
      );
    } finally {
      unhold();
      stopBeating();
      this.running.delete(entry);
      this.deps.activity?.ended(lane.name, task.id);
      if (startedAt !== undefined) {
        const frames = Array.isArray(task.payload.frames) ? task.payload.frames.length : 0;
        this.deps.metrics?.taskEnded(task.kind, outcome, (Date.now() - startedAt) / 1000, frames);
      }
      // After the task's bookkeeping: the log says how the run ended, which is known only now.
      await taskLog?.close(
        outcome,
        failure === undefined ? undefined : String((failure as Error)?.message ?? failure).slice(0, 4000),
      );
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
    const refusal = await this.deps.placement?.refusal(task, this.slotName(lane), facts);
    if (!refusal) return false;
    log.info({ refusal }, 'task left for another worker');
    // The jitter breaks a phase lock: with a fixed delay, the refusing lane's own poll lands
    // just as the task is due again, every time, and a worker that can run it never gets it.
    const delayMs = this.opts.refusalDelayMs + Math.floor(Math.random() * this.opts.pollMs);
    await this.deps.queue.release(task.id, workerId, { delayMs });
    return true;
  }

  private slotName(lane: Lane): string {
    return `${this.opts.workerName}/${lane.name}`;
  }

  private async jobStopped(jobId: string, log: Logger): Promise<void> {
    const job = await this.deps.jobs.getById(jobId);
    if (!job || (job.job.status !== 'canceled' && job.job.status !== 'failed')) return;
    await this.deps
      .onJobStopped?.(jobId)
      .catch((err: unknown) => log.warn({ err }, 'cleaning up a stopped job failed'));
  }
}
