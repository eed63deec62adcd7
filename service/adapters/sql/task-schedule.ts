// A job's scheduling in the SQL task queues: its priority, fair-share group and pause, kept per job
// (job_sched) so tasks it enqueues later, and tasks it gets back (a retry, a release), follow them.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { TaskKind } from '../../ports/tasks.js';
import type { DB } from './schema.js';
import { virtualTime } from './share-tags.js';
import { framesOf } from '../../domain/task-runs.js';

/** The job's scheduling as its tasks are enqueued with it. */
export interface JobSched {
  priority: number;
  shareGroup: string;
  paused: boolean;
}

/**
 * The job's scheduling, recorded with its first task: the first priority and group named stay the
 * job's (a later enqueue naming others does not override setJobPriority).
 */
export async function jobSched(
  trx: Kysely<DB>,
  t: { jobId: string; priority?: number; shareGroup?: string },
): Promise<JobSched> {
  const row = await trx
    .insertInto('job_sched')
    .values({ job_id: t.jobId, priority: t.priority ?? null, share_group: t.shareGroup ?? null, paused: 0 })
    .onConflict((oc) =>
      oc.column('job_id').doUpdateSet({
        priority: sql<number | null>`coalesce(job_sched.priority, excluded.priority)`,
        share_group: sql<string | null>`coalesce(job_sched.share_group, excluded.share_group)`,
      }),
    )
    .returning(['priority', 'share_group', 'paused'])
    .executeTakeFirstOrThrow();
  return { priority: row.priority ?? 0, shareGroup: row.share_group ?? '', paused: row.paused === 1 };
}

/** A new task's row before its fair-share tag: what enqueue and the batched enqueue both insert. */
export interface NewTaskRow {
  id: string;
  job_id: string;
  kind: string;
  payload: string;
  state: 'queued' | 'paused';
  priority: number;
  share_group: string;
  units: number;
}

export function newTaskRow(
  t: { id: string; jobId: string; kind: string; payload?: Record<string, unknown> },
  job: JobSched,
): NewTaskRow {
  return {
    id: t.id,
    job_id: t.jobId,
    kind: t.kind,
    payload: JSON.stringify(t.payload ?? {}),
    state: job.paused ? 'paused' : 'queued',
    priority: job.priority,
    share_group: job.shareGroup,
    units: framesOf(t.payload ?? null)?.length ?? 0,
  };
}

/** The state of a task handed back to the queue (a retry, a release): held while its job is paused. */
export function requeuedState(): RawBuilder<string> {
  return sql<string>`case when exists (select 1 from job_sched s where s.job_id = tasks.job_id and s.paused = 1)
    then 'paused' else 'queued' end`;
}

/** Sets the job's priority for its open tasks and later ones; how many queued tasks changed. */
export async function setJobPriority(db: Kysely<DB>, jobId: string, priority: number): Promise<number> {
  if (!Number.isInteger(priority)) throw new Error(`a priority must be an integer (got ${priority})`);
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('job_sched')
      .values({ job_id: jobId, priority, share_group: null, paused: 0 })
      .onConflict((oc) => oc.column('job_id').doUpdateSet({ priority }))
      .execute();
    const queued = await trx
      .updateTable('tasks')
      .set({ priority })
      .where('job_id', '=', jobId)
      .where('state', 'in', ['queued', 'paused'])
      .where('priority', '!=', priority)
      .executeTakeFirst();
    // A running task keeps it too, for when it comes back (a retry).
    await trx
      .updateTable('tasks')
      .set({ priority })
      .where('job_id', '=', jobId)
      .where('state', '=', 'running')
      .execute();
    return Number(queued.numUpdatedRows);
  });
}

/** Holds the job's queued tasks (and those it enqueues or gets back later); how many were held. */
export async function pauseJob(db: Kysely<DB>, jobId: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('job_sched')
      .values({ job_id: jobId, priority: null, share_group: null, paused: 1 })
      .onConflict((oc) => oc.column('job_id').doUpdateSet({ paused: 1 }))
      .execute();
    const r = await trx
      .updateTable('tasks')
      .set({ state: 'paused' })
      .where('job_id', '=', jobId)
      .where('state', '=', 'queued')
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  });
}

/**
 * Queues the job's held tasks again; the kinds that got tasks back. A paused job waited by choice,
 * so its tags move up to the virtual time rather than let it claim ahead of everyone for the time
 * it was held (fair share counts only the time a group waits).
 */
export async function resumeJob(db: Kysely<DB>, jobId: string): Promise<{ n: number; kinds: TaskKind[] }> {
  return db.transaction().execute(async (trx) => {
    await trx.updateTable('job_sched').set({ paused: 0 }).where('job_id', '=', jobId).execute();
    const held = await trx
      .selectFrom('tasks')
      .select(['kind', (eb) => eb.fn.min('tag').as('first')])
      .where('job_id', '=', jobId)
      .where('state', '=', 'paused')
      .groupBy('kind')
      .execute();
    let n = 0;
    for (const { kind, first } of held) {
      const shift = Math.max(0, (await virtualTime(trx, kind)) - Number(first));
      const r = await trx
        .updateTable('tasks')
        .set({ state: 'queued', tag: sql<number>`tag + ${shift}` })
        .where('job_id', '=', jobId)
        .where('kind', '=', kind)
        .where('state', '=', 'paused')
        .executeTakeFirst();
      n += Number(r.numUpdatedRows);
    }
    return { n, kinds: held.map((h) => h.kind as TaskKind) };
  });
}
