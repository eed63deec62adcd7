import type { Kysely } from 'kysely';
import type { Task, TaskInfo, TaskKind, TaskQueue, TaskState } from '../../ports.js';
import type { DB } from './db.js';

/**
 * Durable task queue in the service's SQLite database. A claim is a lease: a worker that dies
 * stops extending it, and the task becomes claimable again when the lease runs out.
 */
export class SqliteTaskQueue implements TaskQueue {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly now: () => number = Date.now,
  ) {}

  async enqueue(t: { id: string; jobId: string; kind: TaskKind; payload?: Record<string, unknown>; after?: readonly string[] }): Promise<void> {
    const ts = new Date(this.now()).toISOString();
    await this.db.transaction().execute(async (trx) => {
      const added = await trx
        .insertInto('tasks')
        .values({
          id: t.id,
          job_id: t.jobId,
          kind: t.kind,
          payload: JSON.stringify(t.payload ?? {}),
          state: 'queued',
          attempts: 0,
          run_after: this.now(),
          worker_id: null,
          lease_until: null,
          last_error: null,
          created_at: ts,
          updated_at: ts,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      if (Number(added.numInsertedOrUpdatedRows ?? 0n) === 0 || !t.after?.length) return;
      await trx
        .insertInto('task_deps')
        .values(t.after.map((dep) => ({ task_id: t.id, dep_id: dep })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    });
  }

  async claim(workerId: string, kinds: readonly TaskKind[], leaseMs: number): Promise<Task | undefined> {
    if (kinds.length === 0) return undefined;
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('tasks')
        .selectAll()
        .where('kind', 'in', kinds)
        .where((eb) =>
          eb.or([
            eb.and([eb('state', '=', 'queued'), eb('run_after', '<=', now)]),
            eb.and([eb('state', '=', 'running'), eb('lease_until', '<', now)]),
          ]),
        )
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
        .orderBy('seq')
        .limit(1)
        .executeTakeFirst();
      if (!row) return undefined;
      await trx
        .updateTable('tasks')
        .set({
          state: 'running',
          worker_id: workerId,
          lease_until: now + leaseMs,
          attempts: row.attempts + 1,
          updated_at: new Date(now).toISOString(),
        })
        .where('id', '=', row.id)
        .execute();
      return {
        id: row.id,
        jobId: row.job_id,
        kind: row.kind as TaskKind,
        payload: JSON.parse(row.payload) as Record<string, unknown>,
        attempts: row.attempts + 1,
      };
    });
  }

  async extendLease(taskId: string, workerId: string, leaseMs: number): Promise<boolean> {
    const r = await this.db
      .updateTable('tasks')
      .set({ lease_until: this.now() + leaseMs })
      .where('id', '=', taskId)
      .where('worker_id', '=', workerId)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  async complete(taskId: string, workerId: string): Promise<void> {
    await this.finish(taskId, workerId, { state: 'done', last_error: null });
  }

  async fail(taskId: string, workerId: string, o: { retryable: boolean; message: string; retryAfterMs?: number }): Promise<void> {
    await this.finish(
      taskId,
      workerId,
      o.retryable
        ? { state: 'queued', last_error: o.message, run_after: this.now() + (o.retryAfterMs ?? 0) }
        : { state: 'failed', last_error: o.message },
    );
  }

  async release(taskId: string, workerId: string): Promise<void> {
    await this.db
      .updateTable('tasks')
      .set((eb) => ({
        state: 'queued',
        attempts: eb('attempts', '-', 1),
        run_after: this.now(),
        worker_id: null,
        lease_until: null,
        updated_at: new Date(this.now()).toISOString(),
      }))
      .where('id', '=', taskId)
      .where('worker_id', '=', workerId)
      .where('state', '=', 'running')
      .execute();
  }

  /** Only the worker holding the lease may finish a task: a late worker cannot undo a re-run. */
  private async finish(
    taskId: string,
    workerId: string,
    set: { state: string; last_error: string | null; run_after?: number },
  ): Promise<void> {
    await this.db
      .updateTable('tasks')
      .set({ ...set, worker_id: null, lease_until: null, updated_at: new Date(this.now()).toISOString() })
      .where('id', '=', taskId)
      .where('worker_id', '=', workerId)
      .where('state', '=', 'running')
      .execute();
  }

  async cancelJob(jobId: string): Promise<number> {
    const r = await this.db
      .updateTable('tasks')
      .set({ state: 'canceled', worker_id: null, lease_until: null, updated_at: new Date(this.now()).toISOString() })
      .where('job_id', '=', jobId)
      .where('state', 'in', ['queued', 'running'])
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  async jobTasks(jobId: string): Promise<TaskInfo[]> {
    const rows = await this.db
      .selectFrom('tasks')
      .select(['id', 'kind', 'state', 'attempts', 'last_error'])
      .where('job_id', '=', jobId)
      .orderBy('seq')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      kind: r.kind as TaskKind,
      state: r.state as TaskState,
      attempts: r.attempts,
      lastError: r.last_error,
    }));
  }

  async counts(): Promise<{ queued: number; running: number; done: number; failed: number }> {
    const rows = await this.db
      .selectFrom('tasks')
      .select(['state', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('state')
      .execute();
    const by = Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
    return { queued: by.queued ?? 0, running: by.running ?? 0, done: by.done ?? 0, failed: by.failed ?? 0 };
  }

  async close(): Promise<void> {
    // The database is owned and closed by whoever opened it.
  }
}
