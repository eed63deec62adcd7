// The task queue of a worker on another machine, through the service's worker API
// (task-routes.ts): the worker holds no Redis or database credentials. It offers what the worker
// runtime uses; the read models of the service (job task lists, load, pruning) are not offered.
// No ready signals: idle lanes find tasks by polling.
import type { z } from 'zod';
import type { EnqueueTask, Task, TaskInfo, TaskKind, TaskQueue, TaskRun } from '../ports/tasks.js';
import type { GroupQueueLoad, QueueAheadCounts } from '../ports/queue-order.js';
import { WorkerApiClient, type WorkerApiAnswer, type WorkerApiClientOptions } from './client.js';
import { WORKER_API_PREFIX } from './contract.js';
import type { WaitingPriority, WaitingTop } from '../ports/waiting-priority.js';
import { RemoteWaitingPriority } from './remote-waiting.js';
import {
  BoolAnswer,
  ClaimAnswer,
  CountAnswer,
  CountsAnswer,
  ENQUEUE_MANY_BODY_LIMIT,
  ENQUEUE_MANY_MAX_TASKS,
  FailuresAnswer,
  TASK_ROUTES,
} from './task-contract.js';

function pathOf(route: string, params: Record<string, string> = {}): string {
  return WORKER_API_PREFIX + route.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}

function notOffered(what: string): never {
  throw new Error(`${what} is not offered to a worker on another machine: it reads the service's own queue`);
}

/** Room left in a batch's body for the envelope (`{"tasks":[...]}`) and the commas. */
const ENVELOPE_BYTES = 64;

/** `tasks` in order, cut into request bodies within the batch route's bounds (task-contract.ts). */
function requestBatches(tasks: readonly EnqueueTask[]): EnqueueTask[][] {
  const out: EnqueueTask[][] = [];
  let batch: EnqueueTask[] = [];
  let bytes = ENVELOPE_BYTES;
  for (const t of tasks) {
    const size = Buffer.byteLength(JSON.stringify(t)) + 1;
    if (batch.length && (batch.length >= ENQUEUE_MANY_MAX_TASKS || bytes + size > ENQUEUE_MANY_BODY_LIMIT)) {
      out.push(batch);
      batch = [];
      bytes = ENVELOPE_BYTES;
    }
    batch.push(t);
    bytes += size;
  }
  if (batch.length) out.push(batch);
  return out;
}

export class RemoteTaskQueue implements TaskQueue, WaitingPriority {
  private readonly api: WorkerApiClient;
  /** The preemption reads (waiting-routes.ts): they turn preemption on for remote workers. */
  private readonly waiting: RemoteWaitingPriority;

  /** Same options as the worker's job store (RemoteWorkerJobs). */
  constructor(opts: WorkerApiClientOptions) {
    this.api = new WorkerApiClient(opts);
    this.waiting = new RemoteWaitingPriority(opts);
  }

  async claim(workerId: string, kinds: readonly TaskKind[], leaseMs: number): Promise<Task | undefined> {
    // A claim retried after its answer was lost may leave a lease nobody runs: it runs out, and the
    // task returns to the queue.
    const task = (await this.send('POST', pathOf(TASK_ROUTES.claim), { workerId, kinds, leaseMs }, ClaimAnswer)).data;
    return task ?? undefined;
  }

  async extendLease(taskId: string, workerId: string, leaseMs: number): Promise<boolean> {
    return (await this.send('POST', pathOf(TASK_ROUTES.extend, { taskId }), { workerId, leaseMs }, BoolAnswer)).data;
  }

  async complete(taskId: string, workerId: string): Promise<void> {
    await this.send('POST', pathOf(TASK_ROUTES.complete, { taskId }), { workerId });
  }

  async release(
    taskId: string,
    workerId: string,
    opts: { delayMs?: number; waitFor?: readonly string[] } = {},
  ): Promise<void> {
    await this.send('POST', pathOf(TASK_ROUTES.release, { taskId }), { workerId, ...opts });
  }

  async fail(
    taskId: string,
    workerId: string,
    outcome: { retryable: boolean; message: string; retryAfterMs?: number },
  ): Promise<void> {
    await this.send('POST', pathOf(TASK_ROUTES.fail, { taskId }), {
      workerId,
      ...outcome,
      message: outcome.message.slice(0, 10_000),
    });
  }

  async enqueue(task: {
    id: string;
    jobId: string;
    kind: TaskKind;
    payload?: Record<string, unknown>;
    after?: readonly string[];
    priority?: number;
    shareGroup?: string;
  }): Promise<void> {
    await this.send('POST', pathOf(TASK_ROUTES.enqueue), task);
  }

  /**
   * One call per batch (POST /tasks/enqueue-many) of up to ENQUEUE_MANY_MAX_TASKS tasks and under its
   * body limit, instead of one per task; each batch is the service queue's enqueueMany.
   */
  async enqueueMany(tasks: readonly EnqueueTask[]): Promise<void> {
    for (const batch of requestBatches(tasks))
      await this.send('POST', pathOf(TASK_ROUTES.enqueueMany), { tasks: batch });
  }

  async cancelJob(jobId: string): Promise<number> {
    return (await this.send('POST', pathOf(TASK_ROUTES.cancelTasks, { id: jobId }), undefined, CountAnswer)).data;
  }

  async recordFailure(jobId: string, worker: string): Promise<number> {
    return (await this.send('POST', pathOf(TASK_ROUTES.failures, { id: jobId }), { worker }, CountAnswer)).data;
  }

  async jobFailures(jobId: string): Promise<Record<string, number>> {
    return (await this.send('GET', pathOf(TASK_ROUTES.failures, { id: jobId }), undefined, FailuresAnswer)).data;
  }

  async counts(): Promise<{ queued: number; running: number; done: number; failed: number }> {
    return (await this.send('GET', pathOf(TASK_ROUTES.counts), undefined, CountsAnswer)).data;
  }

  topWaiting(kinds: readonly TaskKind[]): Promise<WaitingTop | undefined> {
    return this.waiting.topWaiting(kinds);
  }

  takeHandBackPlace(jobId: string, kinds: readonly TaskKind[], holder: string, ttlMs: number): Promise<boolean> {
    return this.waiting.takeHandBackPlace(jobId, kinds, holder, ttlMs);
  }

  jobTasks(): Promise<TaskInfo[]> {
    return notOffered('jobTasks');
  }

  jobTaskRuns(): Promise<TaskRun[]> {
    return notOffered('jobTaskRuns');
  }

  countsByKind(): Promise<Record<TaskKind, { queued: number; running: number }>> {
    return notOffered('countsByKind');
  }

  pruneFinished(): Promise<number> {
    return notOffered('pruneFinished');
  }

  // Scheduling is the operator's and the submitter's, through the service: never a worker's.
  setJobPriority(): Promise<number> {
    return notOffered('setJobPriority');
  }

  pauseJob(): Promise<number> {
    return notOffered('pauseJob');
  }

  resumeJob(): Promise<number> {
    return notOffered('resumeJob');
  }

  setShareWeight(): Promise<void> {
    return notOffered('setShareWeight');
  }

  shareWeights(): Promise<Record<string, number>> {
    return notOffered('shareWeights');
  }

  queueAhead(): Promise<QueueAheadCounts | null> {
    return notOffered('queueAhead');
  }

  groupLoads(): Promise<GroupQueueLoad[]> {
    return notOffered('groupLoads');
  }

  async close(): Promise<void> {}

  /** One call; the parsed body when `schema` is given (2xx), else nothing (204); a refusal throws. */
  private async send(method: string, path: string, body: unknown): Promise<void>;
  private async send<S extends z.ZodType>(method: string, path: string, body: unknown, schema: S): Promise<z.infer<S>>;
  private async send(method: string, path: string, body: unknown, schema?: z.ZodType): Promise<unknown> {
    const a: WorkerApiAnswer = await this.api.call(method, path, body);
    if (a.status >= 400) throw this.api.refusal(a, method, path);
    if (!schema) return undefined;
    return this.api.parse(a, method, path, schema);
  }
}
