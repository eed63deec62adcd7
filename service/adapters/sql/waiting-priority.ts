// The WaitingPriority read (service/ports/waiting-priority.ts) on the SQL queues: per kind, the
// first queued, due and ready task in the claim order (priority desc, tag, seq), one walk of the
// tasks_order index that stops at its first match, as the claim's own candidates do.
import type { Kysely } from 'kysely';
import type { TaskKind } from '../../ports/tasks.js';
import type { WaitingTop } from '../../ports/waiting-priority.js';
import type { DB } from './schema.js';

export async function topWaiting(
  db: Kysely<DB>,
  kinds: readonly TaskKind[],
  now: number,
): Promise<WaitingTop | undefined> {
  let top: WaitingTop | undefined;
  for (const kind of kinds) {
    const row = await db
      .selectFrom('tasks')
      .select(['priority', 'job_id'])
      .where('state', '=', 'queued')
      .where('kind', '=', kind)
      .where('run_after', '<=', now)
      // Not waiting for a task that is not done (a finalize behind its chunks).
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('task_deps')
              .innerJoin('tasks as dep', 'dep.id', 'task_deps.dep_id')
              .select('task_deps.dep_id')
              .whereRef('task_deps.task_id', '=', 'tasks.id')
              .where('dep.state', '!=', 'done'),
          ),
        ),
      )
      .orderBy('priority', 'desc')
      .orderBy('tag')
      .orderBy('seq')
      .limit(1)
      .executeTakeFirst();
    if (row && (!top || row.priority > top.priority)) top = { priority: row.priority, jobId: row.job_id };
  }
  return top;
}
