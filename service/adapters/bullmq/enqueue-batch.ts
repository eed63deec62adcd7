// Batched enqueue on the BullMQ task queue (TaskSubmitter.enqueueMany): up to ENQUEUE_BATCH tasks
// per call of ENQUEUE_MANY (lua-enqueue.ts), one round trip and one atomic step in Redis each,
// instead of a round trip per task. The script runs single enqueue's steps per task in order, so
// the outcome is that of one enqueue after another.
import { framesOf } from '../../domain/task-runs.js';
import type { EnqueueTask, TaskKind } from '../../ports/tasks.js';
import { bullJobId } from './keys.js';
import type { HandOver, QueueScripts } from './scripts.js';

/** Tasks per script call: bounds how long one call holds Redis, as the SQL queues bound a transaction. */
export const ENQUEUE_BATCH = 1000;

type Reply = string | number | null | Reply[];

/** What a batch left to do once Redis has it: kinds to signal, existing tasks to hand to BullMQ. */
export interface BatchOutcome {
  queued: Set<TaskKind>;
  handOvers: HandOver[];
}

/** The script's arguments for one task: as single enqueue sends them, with its count of dependencies. */
function taskArgs(t: EnqueueTask): (string | number)[] {
  const after = (t.after ?? []).map(bullJobId);
  return [
    bullJobId(t.id),
    t.id,
    t.jobId,
    t.kind,
    JSON.stringify(t.payload ?? {}),
    t.priority === undefined ? '' : String(t.priority),
    t.shareGroup === undefined ? '' : `g:${t.shareGroup}`,
    framesOf(t.payload ?? null)?.length ?? 0,
    after.length,
    ...after,
  ];
}

/** Enqueues `tasks` (at most ENQUEUE_BATCH, already checked) in one script call. */
export async function enqueueBatch(scripts: QueueScripts, tasks: readonly EnqueueTask[]): Promise<BatchOutcome> {
  if (tasks.length > ENQUEUE_BATCH) throw new Error(`at most ${ENQUEUE_BATCH} tasks per batch (got ${tasks.length})`);
  const replies = (await scripts.runRaw('rbtqEnqueueMany', ...tasks.flatMap(taskArgs))) as Reply[][];
  const out: BatchOutcome = { queued: new Set(), handOvers: [] };
  replies.forEach((r, i) => {
    if (r[0] === 3) out.queued.add(tasks[i]!.kind);
    else if (r[0] === 2)
      out.handOvers.push({
        bid: bullJobId(tasks[i]!.id),
        kind: r[1] as TaskKind,
        jobId: String(r[2]),
        payload: String(r[3]),
      });
  });
  return out;
}
