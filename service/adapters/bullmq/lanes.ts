// One BullMQ Queue (to add, remove and count) and one Worker (to fetch and settle jobs by hand)
// per task kind, all on the adapter's one shared connection.
import type { Redis } from 'ioredis';
import { Queue, Worker, createRedisBackend } from 'bullmq';
import type { TaskKind } from '../../ports/tasks.js';
import { TASK_KINDS } from '../../ports/tasks.js';
import type { KeySpace } from './keys.js';

/** What a BullMQ job carries: the task's job and payload (its id and kind are the job's id and queue). */
export interface TaskData {
  jobId: string;
  payload: Record<string, unknown>;
}

export interface Lane {
  kind: TaskKind;
  queue: Queue<TaskData, unknown, string>;
  worker: Worker<TaskData, unknown, string>;
}

export interface LaneOptions {
  /** BullMQ's stalled-job sweep period (the safety net for locks nobody settles). */
  stalledIntervalMs: number;
  onError: (err: Error) => void;
}

/**
 * Lock a fetched job holds until the adapter sets it to the claim's lease, a moment later. Also
 * the lease of a job fetched by a call that then failed: BullMQ's sweep re-queues it after this.
 */
const FETCH_LOCK_MS = 30_000;

/** Lease expiry is no failure in the port's terms: BullMQ must never fail a task for stalling. */
const NEVER_FAIL_STALLED = 1_000_000_000;

export async function openLanes(client: Redis, keys: KeySpace, opts: LaneOptions): Promise<Map<TaskKind, Lane>> {
  const lanes = new Map<TaskKind, Lane>();
  for (const kind of TASK_KINDS) {
    const queue = new Queue<TaskData, unknown, string>(kind, {
      connection: client,
      prefix: keys.bullPrefix,
      // Finished jobs stay: the join and the counts read them (as the SQL queues keep their rows).
      defaultJobOptions: { removeOnComplete: false, removeOnFail: false, attempts: 1 },
    });
    // Jobs are fetched without blocking (claim must answer at once), so the worker needs no
    // blocking connection of its own: the backend shares the adapter's connection.
    const worker = new Worker<TaskData, unknown, string>(
      kind,
      null,
      {
        connection: client,
        prefix: keys.bullPrefix,
        autorun: false,
        lockDuration: FETCH_LOCK_MS,
        stalledInterval: opts.stalledIntervalMs,
        maxStalledCount: NEVER_FAIL_STALLED,
      },
      (name, o) => createRedisBackend(name, o, {}),
    );
    queue.on('error', opts.onError);
    worker.on('error', opts.onError);
    lanes.set(kind, { kind, queue, worker });
  }
  try {
    await Promise.all([...lanes.values()].flatMap((l) => [l.queue.waitUntilReady(), l.worker.waitUntilReady()]));
    // Fetching by hand, BullMQ's own stalled sweep must be started by hand too.
    for (const l of lanes.values()) await l.worker.startStalledCheckTimer();
  } catch (err) {
    await closeLanes(lanes);
    throw err;
  }
  return lanes;
}

export async function closeLanes(lanes: Map<TaskKind, Lane>): Promise<void> {
  await Promise.allSettled([...lanes.values()].flatMap((l) => [l.worker.close(true), l.queue.close()]));
}

/** The lane of a kind; a kind the adapter does not know is refused with the ones it does. */
export function laneOf(lanes: Map<TaskKind, Lane>, kind: TaskKind): Lane {
  const lane = lanes.get(kind);
  if (!lane)
    throw new Error(`unknown task kind ${JSON.stringify(kind)}; the BullMQ task queue knows ${TASK_KINDS.join(', ')}`);
  return lane;
}
