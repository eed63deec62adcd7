// 003_job_preview_key: Reads serve the stored job JSON as is and only splice in a signed preview URL: the key to
// sign lives in a column, so serving never parses the job or its internal state.
import { sql, type Kysely, type Migration } from 'kysely';

export const m003JobPreviewKey: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('jobs').addColumn('preview_key', 'text').execute();
    await sql`update jobs set preview_key = json_extract(internal, '$.previewKey')
      where json_extract(doc, '$.output.isDeletedForClient') is not 1`.execute(db);
  },
};
