// 015_job_output_bytes: The workspace storage quota sums each job's published output bytes; jobs finished before
// this migration count 0 until their next write. An index per workspace keeps the upload sum cheap.
import { type Kysely, type Migration } from 'kysely';

export const m015JobOutputBytes: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('jobs')
      .addColumn('output_bytes', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('uploads_ws').on('uploads').column('workspace_id').execute();
  },
};
