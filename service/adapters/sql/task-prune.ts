// Pruning the SQL task queues (QueueHousekeeping.pruneFinished): tasks that finished long ago go,
// with what the queue kept for them; a job's failure counts and scheduling once none of its tasks is left.
import type { Kysely } from 'kysely';
import type { DB } from './schema.js';
import { pruneWaits } from './task-waits.js';

export function pruneFinished(db: Kysely<DB>, before: Date, limit: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const ids = (
      await trx
        .selectFrom('tasks')
        .select('id')
        .where('state', 'in', ['done', 'failed', 'canceled'])
        .where('updated_at', '<', before.toISOString())
        .orderBy('seq')
        .limit(limit)
        .execute()
    ).map((r) => r.id);
    if (ids.length === 0) return 0;
    await trx
      .deleteFrom('task_deps')
      .where((eb) => eb.or([eb('task_id', 'in', ids), eb('dep_id', 'in', ids)]))
      .execute();
    await pruneWaits(trx, ids, before);
    await trx.deleteFrom('tasks').where('id', 'in', ids).execute();
    await trx
      .deleteFrom('task_failures')
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('tasks').select('tasks.id').whereRef('tasks.job_id', '=', 'task_failures.job_id'))),
      )
      .execute();
    await trx
      .deleteFrom('job_sched')
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('tasks').select('tasks.id').whereRef('tasks.job_id', '=', 'job_sched.job_id'))),
      )
      .execute();
    return ids.length;
  });
}
