// Enqueueing many tasks at once (a planned render's chunks and finalize, the chunks held for the
// previews' approval): one batch where the queue has TaskSubmitter.enqueueMany (the SQL queues: a
// few statements instead of about six per task; BullMQ: one Lua call instead of one per task; a
// remote worker: one HTTP call instead of one per task), else one enqueue after another, the same
// outcome.
import type { EnqueueTask, TaskSubmitter } from '../ports/tasks.js';

/** Enqueues `tasks` in order, batched where the queue can. */
export async function enqueueAll(
  queue: Pick<TaskSubmitter, 'enqueue' | 'enqueueMany'>,
  tasks: readonly EnqueueTask[],
): Promise<void> {
  if (tasks.length > 1 && queue.enqueueMany) return queue.enqueueMany(tasks);
  for (const t of tasks) await queue.enqueue(t);
}
