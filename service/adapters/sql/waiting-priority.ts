// The WaitingPriority read (service/ports/waiting-priority.ts) on the SQL queues: per kind, the
// first queued, due and ready task in the claim order (priority desc, tag, seq), one walk of the
// tasks_order index that stops at its first match, as the claim's own candidates do.
import type { Kysely } from 'kysely';
import type { TaskKind } from '../../ports/tasks.js';
import type { WaitingTop } from '../../ports/waiting-priority.js';
import { claimable } from './claimable.js';
import type { DB } from './schema.js';

export async function topWaiting(
  db: Kysely<DB>,
  kinds: readonly TaskKind[],
  now: number,
): Promise<WaitingTop | undefined> {
  let top: WaitingTop | undefined;
  for (const kind of kinds) {
    const row = await claimable(db.selectFrom('tasks'), kind, now)
      .select(['priority', 'job_id'])
      .orderBy('priority', 'desc')
      .orderBy('tag')
      .orderBy('seq')
      .limit(1)
      .executeTakeFirst();
    if (row && (!top || row.priority > top.priority)) top = { priority: row.priority, jobId: row.job_id };
  }
  return top;
}
