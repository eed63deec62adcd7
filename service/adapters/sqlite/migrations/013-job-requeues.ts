// 013_job_requeues: Requeues (job-requeue extension): one new job per old job and frame
// selection, and the upload it renders.
import { type Kysely, type Migration } from 'kysely';

export const m013JobRequeues: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('job_requeues')
      .addColumn('source_job_id', 'text', (c) => c.notNull())
      .addColumn('selection', 'text', (c) => c.notNull())
      .addColumn('job_id', 'text', (c) => c.notNull().unique())
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('upload_slug', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('job_requeues_pk', ['source_job_id', 'selection'])
      .execute();
    await db.schema.createIndex('job_requeues_slug').on('job_requeues').column('upload_slug').execute();
  },
};
