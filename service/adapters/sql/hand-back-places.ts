// Hand-back places (WaitingPriority.takeHandBackPlace) on the SQL queues: rows of the named leases
// table (`preempt:<job>:<i>`, i below the job's queued tasks), taken by the same one-statement
// compare-and-set as any lease, so workers on every machine sharing the database share them.
import type { Kysely } from 'kysely';
import type { TaskKind } from '../../ports/tasks.js';
import { MAX_HAND_BACK_PLACES } from '../../ports/waiting-priority.js';
import type { DB } from './schema.js';
import { SqlLeaseStore } from './lease-store.js';

/** The lease name of place `i` of a job. */
export const placeName = (jobId: string, i: number) => `preempt:${jobId}:${i}`;

export async function takeHandBackPlace(
  db: Kysely<DB>,
  now: number,
  o: { jobId: string; kinds: readonly TaskKind[]; holder: string; ttlMs: number },
): Promise<boolean> {
  if (o.kinds.length === 0) return false;
  // The job's tasks a claim could take now. Render chunks wait for no other task, so unlike the
  // claim this does not look at task_deps; a finalize counted early frees no slot anyway.
  const queued = await db
    .selectFrom('tasks')
    .select('id')
    .where('job_id', '=', o.jobId)
    .where('state', '=', 'queued')
    .where('kind', 'in', [...o.kinds])
    .where('run_after', '<=', now)
    .limit(MAX_HAND_BACK_PLACES)
    .execute();
  if (queued.length === 0) return false;
  // Places whose time ran out are dropped here, so the table holds only the live ones.
  await db.deleteFrom('leases').where('name', 'like', 'preempt:%').where('until', '<', now).execute();
  const leases = new SqlLeaseStore(db, () => now);
  for (let i = 0; i < queued.length; i++) {
    if (await leases.acquire(placeName(o.jobId, i), o.holder, o.ttlMs)) return true;
  }
  return false;
}
