// The worker runtime: lanes that claim tasks from the queue and run their handlers, and what a
// handler is given. One control lane runs the short CPU tasks (validate, plan a render, finalize);
// one render lane per slot (GPU, or the CPU) runs render chunks. A lane's claim loop is
// lane-loop.ts; one run of a claimed task (a lease kept by a heartbeat, then completed or its
// failure settled) is task-run.ts.
import os from 'node:os';
import type { Logger } from 'pino';
import type { JobRecord, WorkerJobStore } from '../../ports/jobs.js';
import type { Task, TaskKind, TaskLeases, TaskSubmitter } from '../../ports/tasks.js';
import type { Slot } from './devices.js';
import { CanceledTaskError } from './outcomes.js';
import type { FailureDeps } from './task-failure.js';
import type { WorkerMetrics } from '../../metrics/registry.js';
import type { Placement } from './placement.js';
import { IdleLanes } from './idle-lanes.js';
import { TaskBeats } from './task-beats.js';
import type { TaskLogLines } from '../logs/task-log.js';
import type { LaneActivity } from './activity.js';
import { laneLoop } from './lane-loop.js';
import { TaskRunner } from './task-run.js';

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

/** What the runtime works with: the job store, the queue, and the optional parts a worker adds. */
export interface RuntimeDeps {
  jobs: WorkerJobStore;
  /** Runs tasks; drops a job's other tasks when one of them fails it. */
  queue: TaskLeases & Pick<TaskSubmitter, 'cancelJob'>;
  log: Logger;
  /** Called when a job ended canceled or failed under this worker (to remove its working files). */
  onJobStopped?: (jobId: string) => Promise<void>;
  /** Called when this process hears a job was canceled, running or not (idle warm Blenders end). */
  onJobCanceled?: (jobId: string) => void;
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
}

export class WorkerRuntime {
  private readonly opts: Required<RuntimeOptions>;
  private stopping = false;
  private loops: Promise<void>[] = [];
  private readonly idle = new IdleLanes();
  private unsubscribe: (() => void) | undefined;
  private readonly runner: TaskRunner;

  constructor(
    private readonly deps: RuntimeDeps,
    private readonly lanes: readonly Lane[],
    handlers: Partial<Record<TaskKind, TaskHandler>>,
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
    this.runner = new TaskRunner({
      deps,
      opts: this.opts,
      handlers,
      beats: new TaskBeats(deps, this.opts),
      stopping: () => this.stopping,
      kick: () => this.kick(),
    });
  }

  start(): void {
    // Another process made a task claimable: one idle lane of its kind claims now.
    this.unsubscribe = this.deps.queue.onReady?.((kind) => this.idle.wakeOne(kind));
    this.loops = this.lanes.map((lane) => {
      const workerId = `${this.opts.workerId}:${lane.name}`;
      return laneLoop(lane, {
        workerId,
        idle: this.idle,
        pollMs: this.opts.pollMs,
        claim: () => this.deps.queue.claim(workerId, lane.kinds, this.opts.leaseMs),
        run: (task, handedOff) => this.runner.run(task, lane, workerId, handedOff),
        stopping: () => this.stopping,
        onClaimError: (err) => this.deps.log.error({ err, lane: lane.name }, 'claiming a task failed'),
      });
    });
  }

  /** Wakes idle lanes now (a task was just enqueued in this process). */
  kick(): void {
    this.idle.wakeAll();
  }

  /** Stops this process's work on a job now (it was canceled); other processes notice by heartbeat. */
  cancelJob(jobId: string): void {
    this.runner.abort(new CanceledTaskError('job canceled'), jobId);
    this.deps.onJobCanceled?.(jobId);
  }

  /** Stops claiming, aborts running work (its tasks go back to the queue) and waits for the lanes. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    this.kick();
    this.runner.abort(new CanceledTaskError('worker stopping'));
    await Promise.all(this.loops);
  }
}
