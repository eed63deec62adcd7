// The claimable filter of the SQL task queues, shared by the claim (./task-claim.ts) and the
// WaitingPriority read (./waiting-priority.ts), so that the read sees exactly the tasks a claim
// would take: queued, of one kind, due, and not waiting for a task that is not done.
import type { SelectQueryBuilder } from 'kysely';
import type { TaskKind } from '../../ports/tasks.js';
import type { DB } from './schema.js';

/** Not waiting for a task that is not done (a finalize behind its chunks). */
export function ready<O>(q: SelectQueryBuilder<DB, 'tasks', O>): SelectQueryBuilder<DB, 'tasks', O> {
  return q.where(({ not, exists, selectFrom }) =>
    not(
      exists(
        selectFrom('task_deps')
          .innerJoin('tasks as dep', 'dep.id', 'task_deps.dep_id')
          .select('task_deps.dep_id')
          .whereRef('task_deps.task_id', '=', 'tasks.id')
          .where('dep.state', '!=', 'done'),
      ),
    ),
  );
}

/** The queued tasks of `kind` a claim at `now` may take: due (run_after <= now) and ready. */
export function claimable<O>(
  q: SelectQueryBuilder<DB, 'tasks', O>,
  kind: TaskKind,
  now: number,
): SelectQueryBuilder<DB, 'tasks', O> {
  return ready(q).where('state', '=', 'queued').where('kind', '=', kind).where('run_after', '<=', now);
}
