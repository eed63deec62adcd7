// The BullMQ task queue's claim: the first task in the claim order (lua-common.ts) is taken from the
// adapter's own sets, handed to BullMQ and fetched under the claiming worker's lock, which is the
// lease. Tasks BullMQ already holds (a lease that ran out) are fetched first; one handed back without
// delay is back in the order (settle.ts), as is one whose delay ran out (preclaim), not in BullMQ.
import { UnrecoverableError } from 'bullmq';
import type { Task, TaskKind } from '../../ports/tasks.js';
import { laneOf, type Lane, type TaskData } from './lanes.js';
import type { HandOver, QueueScripts } from './scripts.js';
import type { ReadySignal } from '../ready-signal.js';

/** Canceled tasks one claim removes from a queue before it gives up for this call. */
const MAX_DISCARDS = 25;

export interface ClaimContext {
  lanes: Map<TaskKind, Lane>;
  scripts: QueueScripts;
  signal: ReadySignal;
  handOverGraceMs: number;
  /** The clock slot time is charged on (fair share), epoch ms. */
  now: () => number;
  /** Remembers a claimed task's kind (saves a lookup when it is settled). */
  remember: (taskId: string, kind: TaskKind) => void;
}

export async function claimTask(
  c: ClaimContext,
  workerId: string,
  kinds: readonly TaskKind[],
  leaseMs: number,
  again = true,
): Promise<Task | undefined> {
  const pre = await c.scripts.preclaim(kinds, c.handOverGraceMs);
  await handOver(c, pre.handOvers);
  // The claim's own task: no signal, this claimer fetches it next.
  if (pre.took) await handOver(c, [pre.took], false);
  // Leases that ran out: BullMQ's own stalled sweep moves those jobs back to wait.
  for (const kind of pre.sweep) await laneOf(c.lanes, kind).worker.getBackend().moveStalledJobsToWait();
  // What BullMQ holds already, oldest first (a retry keeps its place), then the task just taken.
  const ready = kinds.map((kind, i) => ({ kind, seq: pre.order[i] ?? -1 })).filter((k) => k.seq >= 0);
  ready.sort((a, b) => a.seq - b.seq);
  const order = [
    ...new Set([
      ...ready.map((k) => k.kind),
      ...(pre.took ? [pre.took.kind] : []),
      ...pre.sweep,
      ...pre.handOvers.map((h) => h.kind),
    ]),
  ];
  for (const kind of order) {
    if (!kinds.includes(kind)) continue;
    const task = await fetch(c, kind, workerId, leaseMs);
    if (task) return task;
  }
  // Preclaim took nothing from the order for the tasks BullMQ held; none of them could run (canceled,
  // its job paused), so the order's first task is taken now rather than the claim finding nothing.
  if (again && ready.length > 0 && !pre.took) return claimTask(c, workerId, kinds, leaseMs, false);
  return undefined;
}

/** Takes the next job of `kind` for `workerId`, dropping canceled ones (and a paused job's) on the way. */
async function fetch(c: ClaimContext, kind: TaskKind, workerId: string, leaseMs: number): Promise<Task | undefined> {
  const { worker, queue } = laneOf(c.lanes, kind);
  for (let i = 0; i < MAX_DISCARDS; i++) {
    const job = await worker.getNextJob(workerId, { block: false });
    if (!job?.id) return undefined;
    const r = await c.scripts.claimed(job.id, kind, workerId, leaseMs, c.now());
    if (r === 'lost') continue;
    if (r === 'discard') {
      await asHolder(() => job.moveToFailed(new UnrecoverableError('task canceled'), workerId, false));
      await queue.remove(job.id);
      continue;
    }
    c.remember(r.id, kind);
    return { id: r.id, jobId: r.jobId, kind, payload: job.data.payload ?? {}, attempts: r.attempts };
  }
  return undefined;
}

/**
 * Hands tasks to BullMQ. A job id BullMQ has already is not added twice, so a hand-over that
 * preclaim repeats (it found no BullMQ job after the grace) is safe.
 */
export async function handOver(c: ClaimContext, list: readonly HandOver[], notify = true): Promise<void> {
  for (const h of list) {
    const data: TaskData = { jobId: h.jobId, payload: JSON.parse(h.payload) as Record<string, unknown> };
    await laneOf(c.lanes, h.kind).queue.add(h.kind, data, { jobId: h.bid });
    if (notify) c.signal.notify(h.kind);
  }
}

/** Runs a BullMQ move that checks the lock; false when the caller does not hold it (BullMQ's negative codes). */
export async function asHolder(move: () => Promise<unknown>): Promise<boolean> {
  try {
    await move();
    return true;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'number' && code < 0) return false;
    throw err;
  }
}
