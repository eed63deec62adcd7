// The task queue, split by the role of whoever uses it: submitter (routes), leases (workers),
// failure ledger (placement) and housekeeping (metrics, retention).
import type { QueueOrder } from './queue-order.js';
import type { ShareWeights } from './share-weights.js';

/** Every kind of task, in the order a job needs them. */
export const TASK_KINDS = ['validate', 'render', 'render-chunk', 'finalize'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

export interface Task {
  id: string;
  jobId: string;
  kind: TaskKind;
  payload: Record<string, unknown>;
  attempts: number;
}

export type TaskState = 'queued' | 'running' | 'done' | 'failed' | 'canceled';

/** What a queue tells about one task of a job (for deciding when a job's chunks are all done). */
export interface TaskInfo {
  id: string;
  kind: TaskKind;
  state: TaskState;
  attempts: number;
  lastError: string | null;
}

/** One task of a job as a person looking into the job sees it (the dashboard's tasks table). */
export interface TaskRun extends TaskInfo {
  /** The frames of a render chunk (its payload's `frames`); null for other kinds. */
  frames: number[] | null;
  /** The worker holding the task now, else the one that ran its latest attempt; null before the first claim. */
  worker: string | null;
  /** When the latest attempt was claimed (ISO 8601); null before the first claim. */
  startedAt: string | null;
  /** When the task ended (done, failed or canceled; ISO 8601); null while it has not. */
  finishedAt: string | null;
}

/** Reading a job's tasks with who ran them and when, for the job-tasks route. */
export interface TaskRunReader {
  /** Every task of a job still in the queue, oldest first (finished tasks go after finishedTaskRetentionDays). */
  jobTaskRuns(jobId: string): Promise<TaskRun[]>;
}

/** What the API routes do to the queue: add a job's work, and drop it when the job is canceled. */
export interface TaskSubmitter {
  /**
   * Durable enqueue; a task whose id already exists is not added again (idempotent). A task with
   * `after` is claimable only once every task it names is done (a job's finalize after its chunks).
   */
  enqueue(task: {
    id: string;
    jobId: string;
    kind: TaskKind;
    payload?: Record<string, unknown>;
    after?: readonly string[];
    /**
     * Integer; a higher one is claimed first, whatever the fair share. Default 0. Applies when the
     * job has no priority yet (its first task): afterwards the job's own (setJobPriority) wins.
     */
    priority?: number;
    /**
     * The fair-share group the task's slot time is charged to (`ws_123`, `ws_123/alice`). Default
     * '': one group for every task that names none, which keeps today's first-in, first-out order
     * among them. Like priority, the job's first task sets it for the job's later ones.
     */
    shareGroup?: string;
  }): Promise<void>;
  /**
   * `enqueue` of each of `tasks`, in that order, with the same outcome (order, priorities, fair-share
   * tags, dependencies, ids already there skipped) in a few statements: what a planner calls with a
   * job's chunks and finalize (through domain/enqueue-all.ts, which falls back to `enqueue` one by one
   * where this is absent). All of them or none (one transaction per batch of up to 1,000 tasks).
   */
  enqueueMany?(tasks: readonly EnqueueTask[]): Promise<void>;
  /** Drops the job's tasks that are not finished (cancel). */
  cancelJob(jobId: string): Promise<number>;
}

/** One task as `enqueue` takes it. */
export type EnqueueTask = Parameters<TaskSubmitter['enqueue']>[0];

/** What a worker does with the tasks it runs: claim one, keep its lease, report how it ended. */
export interface TaskLeases {
  /** Leases the oldest ready task of the given kinds; it returns to the queue if the lease runs out. */
  claim(workerId: string, kinds: readonly TaskKind[], leaseMs: number): Promise<Task | undefined>;
  extendLease(taskId: string, workerId: string, leaseMs: number): Promise<boolean>;
  complete(taskId: string, workerId: string): Promise<void>;
  /**
   * Hands a claimed task back untouched (the worker is stopping, or cannot run it): it is queued
   * again, claimable after `delayMs` (default 0), and the attempt does not count. `waitFor` (default
   * none): jobs the task waits for; it becomes claimable as soon as one of them ends
   * (DependencyWakes.jobEnded, also when that happened before this call), `delayMs` at the latest.
   */
  release(taskId: string, workerId: string, opts?: { delayMs?: number; waitFor?: readonly string[] }): Promise<void>;
  /** Retryable failures go back to the queue after `retryAfterMs`; fatal ones end the task. */
  fail(
    taskId: string,
    workerId: string,
    outcome: { retryable: boolean; message: string; retryAfterMs?: number },
  ): Promise<void>;
  /**
   * Calls `listener` soon after a task of `kind` may have become claimable in any process that
   * shares the queue (at least: enqueued, or handed back without delay), so idle claimers
   * need not wait for their next poll. Best effort: a signal may be lost or spurious, and
   * claimers still poll. Returns the unsubscribe. Absent where only polling exists (SQLite).
   */
  onReady?(listener: (kind: TaskKind) => void): () => void;
}

/** The per-job blocklist's memory: which worker slots failed which job's tasks. */
export interface FailureLedger {
  /**
   * Counts one failed task of `jobId` on `worker` (a machine's render slot, stable across restarts)
   * and returns that worker's count on the job: the per-job blocklist is built from these.
   */
  recordFailure(jobId: string, worker: string): Promise<number>;
  /** Failed tasks per worker on the job ({} when none); dropped with the job's tasks. */
  jobFailures(jobId: string): Promise<Record<string, number>>;
}

/** Looking after the queue: what is in it, and pruning what finished long ago. */
export interface QueueHousekeeping {
  /** Every task of a job, oldest first. */
  jobTasks(jobId: string): Promise<TaskInfo[]>;
  counts(): Promise<{ queued: number; running: number; done: number; failed: number }>;
  /**
   * Deletes up to `limit` tasks that finished (done, failed or canceled) before `before`, with
   * what the queue kept for them (dependencies; a job's failure counts once none of its tasks is
   * left), oldest first; returns how many. Keeps a long-running farm's queue from growing forever.
   */
  pruneFinished(before: Date, limit: number): Promise<number>;
}

/** The queue's load by task kind, for the workers route (extension workers). */
export interface QueueLoad {
  /** Open tasks of each kind (every kind listed, zeros included): waiting to be claimed, and held by a worker now. */
  countsByKind(): Promise<Record<TaskKind, { queued: number; running: number }>>;
}

/** Scheduling a job's queued tasks (extension `scheduling`). */
export interface TaskScheduling {
  /**
   * Sets the priority of the job's tasks not yet claimed, and of those it enqueues later. Returns how
   * many queued tasks changed.
   */
  setJobPriority(jobId: string, priority: number): Promise<number>;
  /**
   * No task of the job is claimed until resumeJob (tasks enqueued meanwhile wait too); running tasks
   * finish. Returns how many queued tasks were held.
   */
  pauseJob(jobId: string): Promise<number>;
  /** Undoes pauseJob. Returns how many tasks became claimable again. */
  resumeJob(jobId: string): Promise<number>;
}

/**
 * The whole queue, as an adapter implements it; consumers ask for the roles they use. Its claim
 * order: strict priority, then weighted fair share of slot time between the groups waiting
 * (ShareWeights), then enqueue order.
 */
export interface TaskQueue
  extends
    TaskSubmitter,
    TaskLeases,
    FailureLedger,
    QueueHousekeeping,
    TaskRunReader,
    QueueLoad,
    TaskScheduling,
    ShareWeights,
    QueueOrder {
  close(): Promise<void>;
}
