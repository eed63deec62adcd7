// 006_job_delete_after: When a completed job's outputs expire (output.scheduledForDeletionAt), indexed for the sweeper.
import { sql, type Kysely, type Migration } from 'kysely';

export const m006JobDeleteAfter: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('jobs').addColumn('delete_after', 'text').execute();
    await sql`update jobs set delete_after = json_extract(doc, '$.output.scheduledForDeletionAt')
      where json_extract(doc, '$.output.isDeletedForClient') is not 1`.execute(db);
    await db.schema
      .createIndex('jobs_delete_after')
      .on('jobs')
      .column('delete_after')
      .where(sql.ref('delete_after'), 'is not', null)
      .execute();
  },
};
