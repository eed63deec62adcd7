import type { Kysely } from 'kysely';
import type { WorkerRecord, WorkerRegistry, WorkerReport } from '../../ports/workers.js';
import type { DB } from './schema.js';

/**
 * The worker registry on SQLite and PostgreSQL alike: one row per worker process, its latest
 * report as JSON and when it arrived. Never cached: the point is to see other processes.
 */
export class SqlWorkerRegistry implements WorkerRegistry {
  constructor(
    private readonly db: Kysely<DB>,
    /** The clock heartbeats are stamped with, epoch ms. Default Date.now. */
    private readonly now: () => number = Date.now,
  ) {}

  async report(report: WorkerReport): Promise<void> {
    const row = { id: report.id, doc: JSON.stringify(report), heartbeat_at: this.now() };
    await this.db
      .insertInto('workers')
      .values(row)
      .onConflict((oc) => oc.column('id').doUpdateSet({ doc: row.doc, heartbeat_at: row.heartbeat_at }))
      .execute();
  }

  async listWorkers(): Promise<WorkerRecord[]> {
    const rows = await this.db
      .selectFrom('workers')
      .select(['doc', 'heartbeat_at'])
      .orderBy('heartbeat_at', 'desc')
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ ...(JSON.parse(r.doc) as WorkerReport), heartbeatAt: Number(r.heartbeat_at) }));
  }

  async pruneWorkers(before: Date): Promise<number> {
    const r = await this.db.deleteFrom('workers').where('heartbeat_at', '<', before.getTime()).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
