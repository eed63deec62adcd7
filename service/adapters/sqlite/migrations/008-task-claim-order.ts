// 008_task_claim_order: A claim walks each kind's queued tasks in enqueue order and stops at the first it may take.
// tasks_ready goes: with run_after before seq the planner chose it and sorted the backlog.
import { type Kysely, type Migration } from 'kysely';

export const m008TaskClaimOrder: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createIndex('tasks_claim').on('tasks').columns(['state', 'kind', 'seq']).execute();
    await db.schema.dropIndex('tasks_ready').execute();
  },
};
