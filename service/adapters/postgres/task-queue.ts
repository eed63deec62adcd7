import { sql, type Kysely } from 'kysely';
import type { EnqueueTask } from '../../ports/tasks.js';
import { ReadySignal } from '../ready-signal.js';
import type { DB } from '../sql/schema.js';
import type { ClaimPick } from '../sql/task-claim.js';
import { enqueueMany, type InsertTasks } from '../sql/task-enqueue.js';
import { SqlTaskQueue, type FinishSet } from '../sql/task-queue.js';
import { finishPg } from './task-finish.js';
import { PgSignalBus } from './signals.js';

/**
 * Durable task queue in PostgreSQL, for deployments without Redis: several service instances and
 * workers share it. Queries are shared with SQLite (../sql/task-queue.ts). The database is owned
 * and closed by whoever opened it; `now` (default Date.now) times leases.
 */
export class PgTaskQueue extends SqlTaskQueue {
  /** `now`: the queue's clock (default Date.now); `ready`: the ready signal (default none: claimers poll). */
  constructor(
    db: Kysely<DB>,
    now: () => number = Date.now,
    private readonly ready?: ReadySignal,
  ) {
    super(db, now, ready);
  }

  /** One INSERT per batch of tasks (insertUnnest), where enqueue makes about six statements per task. */
  async enqueueMany(tasks: readonly EnqueueTask[]): Promise<void> {
    // Signalled once committed, as enqueue does.
    for (const kind of await enqueueMany(this.db, this.now, tasks, insertUnnest)) this.ready?.notify(kind);
  }

  /**
   * FOR UPDATE SKIP LOCKED: rows another claimer holds are skipped rather than waited for, so
   * concurrent claims neither block each other nor take the same task.
   */
  protected override lockPick(pick: ClaimPick): ClaimPick {
    return pick.forUpdate().skipLocked();
  }

  /** One statement where the shared path takes two (task-finish.ts). */
  protected override finish(taskId: string, workerId: string, set: FinishSet): Promise<void> {
    return finishPg(this.db, taskId, workerId, set, this.now());
  }
}

/**
 * The batch's rows as one INSERT ... SELECT FROM unnest(...) of one array per column: nine
 * parameters whatever the batch's size, rows in the arrays' order (ORDER BY their ordinality), so
 * seq numbers them as one enqueue after another would.
 */
const insertUnnest: InsertTasks = async (trx, rows, at) => {
  if (rows.length === 0) return [];
  const col = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k]);
  const { rows: added } = await sql<{ id: string }>`
    insert into tasks (id, job_id, kind, payload, state, priority, share_group, tag, units, attempts, run_after,
      worker_id, lease_until, last_error, created_at, updated_at)
    select u.id, u.job_id, u.kind, u.payload, u.state, u.priority, u.share_group, u.tag, u.units, 0, ${at.runAfter},
      null, null, null, ${at.ts}, ${at.ts}
    from unnest(${col('id')}::text[], ${col('job_id')}::text[], ${col('kind')}::text[], ${col('payload')}::text[],
      ${col('state')}::text[], ${col('priority')}::integer[], ${col('share_group')}::text[],
      ${col('tag')}::double precision[], ${col('units')}::integer[])
      with ordinality as u (id, job_id, kind, payload, state, priority, share_group, tag, units, ord)
    order by u.ord
    on conflict (id) do nothing
    returning id`.execute(trx);
  return added.map((a) => a.id);
};

/**
 * The queue with ready signals (NOTIFY / LISTEN on `url`), as every process of a PostgreSQL farm
 * runs it: idle workers elsewhere claim a new task at once instead of at their next poll.
 * `onError` gets the signal connection's failures (the queue keeps working by polling).
 */
export function signalledPgTaskQueue(db: Kysely<DB>, url: string, onError?: (err: Error) => void): PgTaskQueue {
  const bus = new PgSignalBus(db, url, onError ? { onError } : {});
  return new PgTaskQueue(db, Date.now, new ReadySignal(bus, onError));
}
