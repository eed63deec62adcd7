// 018_task_scheduling: priorities, fair share and pause (../../sql/share-tags.ts, ../../sql/task-claim.ts).
// A claim walks each kind's queued tasks in (priority desc, tag, seq) order and stops at the first
// it may take; tasks_claim (state, kind, seq) goes, a second walk order would only cost writes.
// tasks_group finds a group's queued tags when they are rescaled (the group's time per frame was
// learned) or its last tag after a cancel.
import { sql, type Kysely, type Migration } from 'kysely';

export const m018TaskScheduling: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('tasks')
      .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('tasks')
      .addColumn('share_group', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    // Tasks queued before this migration keep their order: their tag is their seq, in a group of their own.
    await db.schema
      .alterTable('tasks')
      .addColumn('tag', 'real', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('tasks')
      .addColumn('units', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`update tasks set tag = seq`.execute(db);
    await sql`create index tasks_order on tasks (state, kind, priority desc, tag, seq)`.execute(db);
    await db.schema.createIndex('tasks_group').on('tasks').columns(['share_group', 'state', 'tag']).execute();
    await db.schema.dropIndex('tasks_claim').execute();
    await db.schema
      .createTable('job_sched')
      .addColumn('job_id', 'text', (c) => c.primaryKey())
      .addColumn('priority', 'integer')
      .addColumn('share_group', 'text')
      .addColumn('paused', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('share_groups')
      .addColumn('grp', 'text', (c) => c.primaryKey())
      .addColumn('last_tag', 'real', (c) => c.notNull())
      .addColumn('spf', 'real', (c) => c.notNull())
      .addColumn('spf_tag', 'real', (c) => c.notNull())
      .addColumn('measured', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('retag_at', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('share_weights')
      .addColumn('grp', 'text', (c) => c.primaryKey())
      .addColumn('weight', 'real', (c) => c.notNull())
      .execute();
  },
};
