// 019_dependency_waits: tasks released waiting for other jobs to end (../../sql/task-waits.ts).
// task_waits: which task waits for which job (by job: the wake reads it); job_ends: per awaited
// job, when it ended (null until then; the row is what a release and a wake of the job both write
// first, which orders them on PostgreSQL).
import { type Kysely, type Migration } from 'kysely';

export const m019DependencyWaits: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('task_waits')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_waits_pk', ['task_id', 'job_id'])
      .execute();
    await db.schema.createIndex('task_waits_job').on('task_waits').column('job_id').execute();
    await db.schema
      .createTable('job_ends')
      .addColumn('job_id', 'text', (c) => c.primaryKey())
      .addColumn('ended_at', 'integer')
      .execute();
  },
};
