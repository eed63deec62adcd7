// 002_job_counts: Per-workspace, per-status job counts kept in step with every write, so list totals are O(1).
import { sql, type Kysely, type Migration } from 'kysely';

export const m002JobCounts: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('job_counts')
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('n', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('job_counts_pk', ['workspace_id', 'status'])
      .execute();
    await sql`insert into job_counts (workspace_id, status, n)
      select workspace_id, status, count(*) from jobs group by workspace_id, status`.execute(db);
  },
};
