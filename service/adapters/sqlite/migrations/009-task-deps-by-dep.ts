// 009_task_deps_by_dep: Pruning finished tasks deletes the dependencies that name them (dep_id) too.
import { type Kysely, type Migration } from 'kysely';

export const m009TaskDepsByDep: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createIndex('task_deps_dep').on('task_deps').column('dep_id').execute();
  },
};
