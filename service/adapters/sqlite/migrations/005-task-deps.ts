// 005_task_deps: A task may wait for others (a job's finalize waits for its render chunks): the join is
// data in the queue, so no worker has to survive to start it.
import { type Kysely, type Migration } from 'kysely';

export const m005TaskDeps: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('task_deps')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('dep_id', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_deps_pk', ['task_id', 'dep_id'])
      .execute();
  },
};
