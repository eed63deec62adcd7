// 012_workers: The worker registry: each worker process's latest report and when it arrived (epoch ms).
import { type Kysely, type Migration } from 'kysely';

export const m012Workers: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('workers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('doc', 'text', (c) => c.notNull())
      .addColumn('heartbeat_at', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('workers_heartbeat').on('workers').column('heartbeat_at').execute();
  },
};
