// Tasks released waiting for other jobs to end, in the SQL task queues (extension scheduling,
// `dependsOn`; ports/dependency-waits.ts). A release that names jobs stores one task_waits row per
// job; the job's end (jobEnded) makes those tasks claimable at once and records the end in
// job_ends, so a release that read the job just before it ended is claimable at once too. Both
// write the job's job_ends row first: on PostgreSQL its row lock orders a release and a wake of
// the same job, so the later one always sees what the earlier one wrote (SQLite has one writer).
import type { Kysely } from 'kysely';
import type { TaskKind } from '../../ports/tasks.js';
import type { DB } from './schema.js';
import { requeuedState } from './task-schedule.js';

export interface Released {
  kind: TaskKind;
  /** Claimable now: released without delay, or a job it waits for had already ended. */
  claimable: boolean;
}

/** TaskLeases.release; undefined when `workerId` did not hold the task (a late or repeated call). */
export async function releaseTask(
  db: Kysely<DB>,
  now: number,
  taskId: string,
  workerId: string,
  opts: { delayMs?: number; waitFor?: readonly string[] },
): Promise<Released | undefined> {
  const delayMs = opts.delayMs ?? 0;
  // Sorted: two releases lock the same jobs' rows in one order, never each waiting for the other.
  const waitFor = [...new Set(opts.waitFor ?? [])].sort();
  if (waitFor.length === 0) {
    const r = await requeue(db, now, taskId, workerId, delayMs);
    return r && { kind: r.kind as TaskKind, claimable: delayMs === 0 };
  }
  return db.transaction().execute(async (trx) => {
    const ends = await trx
      .insertInto('job_ends')
      .values(waitFor.map((job_id) => ({ job_id, ended_at: null })))
      .onConflict((oc) => oc.column('job_id').doUpdateSet((eb) => ({ job_id: eb.ref('excluded.job_id') })))
      .returning('ended_at')
      .execute();
    const ended = ends.some((e) => e.ended_at !== null);
    const r = await requeue(trx, now, taskId, workerId, ended ? 0 : delayMs);
    if (!r) return undefined;
    await trx.deleteFrom('task_waits').where('task_id', '=', taskId).execute();
    if (!ended)
      await trx
        .insertInto('task_waits')
        .values(waitFor.map((job_id) => ({ task_id: taskId, job_id })))
        .execute();
    return { kind: r.kind as TaskKind, claimable: ended || delayMs === 0 };
  });
}

/** Queued again (held while its job is paused); the attempt does not count. */
function requeue(db: Kysely<DB>, now: number, taskId: string, workerId: string, delayMs: number) {
  return db
    .updateTable('tasks')
    .set((eb) => ({
      state: requeuedState(),
      attempts: eb('attempts', '-', 1),
      run_after: now + delayMs,
      worker_id: null,
      lease_until: null,
      updated_at: new Date(now).toISOString(),
    }))
    .where('id', '=', taskId)
    .where('worker_id', '=', workerId)
    .where('state', '=', 'running')
    .returning('kind')
    .executeTakeFirst();
}

/** DependencyWakes.jobEnded: the kinds of the tasks made claimable (a paused job's stay held). */
export async function wakeWaiters(db: Kysely<DB>, jobId: string, now: number): Promise<TaskKind[]> {
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('job_ends')
      .values({ job_id: jobId, ended_at: now })
      .onConflict((oc) => oc.column('job_id').doUpdateSet({ ended_at: now }))
      .execute();
    const waiting = () => trx.selectFrom('task_waits').select('task_id').where('job_id', '=', jobId);
    const woken = await trx
      .updateTable('tasks')
      .set({ run_after: now })
      .where('id', 'in', waiting())
      .where('state', 'in', ['queued', 'paused'])
      .where('run_after', '>', now)
      .returning(['kind', 'state'])
      .execute();
    // Every wait of the woken tasks goes: a task that still waits for another job says so again when it runs.
    await trx.deleteFrom('task_waits').where('task_id', 'in', waiting()).execute();
    return [...new Set(woken.filter((w) => w.state === 'queued').map((w) => w.kind as TaskKind))];
  });
}

/**
 * Pruning (QueueHousekeeping.pruneFinished): the waits of the deleted tasks, the ends recorded
 * before `before` (no release can still be reading such a job as unfinished), and rows of jobs
 * nothing waits for that never ended.
 */
export async function pruneWaits(trx: Kysely<DB>, taskIds: readonly string[], before: Date): Promise<void> {
  if (taskIds.length) await trx.deleteFrom('task_waits').where('task_id', 'in', taskIds).execute();
  await trx
    .deleteFrom('job_ends')
    .where((eb) =>
      eb.or([
        eb('ended_at', '<', before.getTime()),
        eb.and([
          eb('ended_at', 'is', null),
          eb.not(
            eb.exists(
              eb
                .selectFrom('task_waits')
                .select('task_waits.task_id')
                .whereRef('task_waits.job_id', '=', 'job_ends.job_id'),
            ),
          ),
        ]),
      ]),
    )
    .execute();
}
