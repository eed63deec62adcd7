// 007_blocklist_leases: Per-job worker failures (the blocklist) and leases for scheduled work (one instance runs it).
import { type Kysely, type Migration } from 'kysely';

export const m007BlocklistLeases: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('task_failures')
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('worker', 'text', (c) => c.notNull())
      .addColumn('n', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_failures_pk', ['job_id', 'worker'])
      .execute();
    await db.schema
      .createTable('leases')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('until', 'integer', (c) => c.notNull())
      .execute();
  },
};
