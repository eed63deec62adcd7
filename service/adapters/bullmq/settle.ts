// Settling the BullMQ task queue's tasks: a holder completes, hands back or fails its task (BullMQ
// moves the job under the holder's lock, then the adapter's own state follows), and a cancel drops
// a job's open tasks from both. A move refused because the lock is no longer the caller's is a no-op.
import type { Redis } from 'ioredis';
import { Job, UnrecoverableError } from 'bullmq';
import { asHolder } from './claim.js';
import type { TaskKind } from '../../ports/tasks.js';
import { TASK_KINDS } from '../../ports/tasks.js';
import { bullJobId, type KeySpace } from './keys.js';
import { laneOf, type Lane, type TaskData } from './lanes.js';
import type { QueueScripts } from './scripts.js';
import type { ReadySignal } from '../ready-signal.js';

/** Task kinds remembered from claims (saves a lookup when settling); oldest forgotten first. */
const KIND_CACHE_SIZE = 10_000;

/** Finds the BullMQ job behind a task id: its kind names the queue it lives in. */
export class TaskHandles {
  private readonly kindCache = new Map<string, TaskKind>();

  constructor(
    private readonly client: Redis,
    private readonly keys: KeySpace,
    private readonly lanes: Map<TaskKind, Lane>,
  ) {}

  remember(taskId: string, kind: TaskKind): void {
    this.kindCache.set(taskId, kind);
    if (this.kindCache.size > KIND_CACHE_SIZE) this.kindCache.delete(this.kindCache.keys().next().value!);
  }

  forget(taskId: string): void {
    this.kindCache.delete(taskId);
  }

  async kindOf(taskId: string): Promise<TaskKind | undefined> {
    const known = this.kindCache.get(taskId);
    if (known) return known;
    const kind = await this.client.hget(`${this.keys.own}t:${bullJobId(taskId)}`, 'k');
    return kind && (TASK_KINDS as readonly string[]).includes(kind) ? (kind as TaskKind) : undefined;
  }

  /** A handle on the task's BullMQ job for settling it (no fetch: settling needs only id and queue). */
  async bullJob(taskId: string): Promise<Job<TaskData, unknown, string> | undefined> {
    const kind = await this.kindOf(taskId);
    if (!kind) return undefined;
    const { worker } = laneOf(this.lanes, kind);
    return new Job<TaskData, unknown, string>(worker, kind, { jobId: '', payload: {} }, {}, bullJobId(taskId));
  }
}

export interface SettleContext {
  handles: TaskHandles;
  lanes: Map<TaskKind, Lane>;
  scripts: QueueScripts;
  signal: ReadySignal;
  /** The clock the adapter's own records are stamped with, epoch ms. */
  now: () => number;
}

export async function completeTask(c: SettleContext, taskId: string, workerId: string): Promise<void> {
  const job = await c.handles.bullJob(taskId);
  if (!job || !(await asHolder(() => job.moveToCompleted(null, workerId, false)))) return;
  c.handles.forget(taskId);
  for (const kind of new Set(await c.scripts.completed(job.id!, c.now()))) c.signal.notify(kind);
}

export async function releaseTask(
  c: SettleContext,
  taskId: string,
  workerId: string,
  opts: { delayMs?: number; waitFor?: readonly string[] },
): Promise<void> {
  const delayMs = opts.delayMs ?? 0;
  const job = await c.handles.bullJob(taskId);
  if (!job || !(await asHolder(() => job.moveToDelayed(Date.now() + delayMs, workerId)))) return;
  c.handles.forget(taskId);
  const kind = job.name as TaskKind;
  await c.scripts.requeued(job.id!, workerId, 'release', '', c.now(), !delayMs);
  // After the release: a job that ended since the caller looked is seen here, one ending later wakes it.
  const woken = opts.waitFor?.length ? (await c.scripts.wait(job.id!, kind, opts.waitFor)) === 'woken' : false;
  if (!delayMs || woken) c.signal.notify(kind);
}

export async function failTask(
  c: SettleContext,
  taskId: string,
  workerId: string,
  o: { retryable: boolean; message: string; retryAfterMs?: number },
): Promise<void> {
  const job = await c.handles.bullJob(taskId);
  if (!job) return;
  if (o.retryable) {
    const delayMs = o.retryAfterMs ?? 0;
    if (!(await asHolder(() => job.moveToDelayed(Date.now() + delayMs, workerId)))) return;
    await c.scripts.requeued(job.id!, workerId, 'retry', o.message, c.now(), !delayMs);
    if (!delayMs) c.signal.notify(job.name as TaskKind);
  } else {
    if (!(await asHolder(() => job.moveToFailed(new UnrecoverableError(o.message), workerId, false)))) return;
    await c.scripts.failed(job.id!, o.message, c.now());
  }
  c.handles.forget(taskId);
}

export async function cancelJobTasks(c: SettleContext, jobId: string): Promise<number> {
  // Canceled in the adapter's state first: a worker that fetches one of these before BullMQ
  // lets go of it finds it canceled and drops it; a holder's settle becomes a no-op.
  const canceled = await c.scripts.cancel(jobId);
  for (const t of canceled) {
    if (t.previous === 'held') continue;
    const { worker, queue } = laneOf(c.lanes, t.kind);
    if (t.previous === 'running' && t.holder) {
      const job = new Job<TaskData, unknown, string>(worker, t.kind, { jobId, payload: {} }, {}, t.bid);
      await asHolder(() => job.moveToFailed(new UnrecoverableError('job canceled'), t.holder, false));
    }
    await queue.remove(t.bid);
  }
  return canceled.length;
}
