// 017_analysis_cache: Scene analyses the validate handler may reuse (service/worker/analysis-cache): only ever read
// within their workspace, hence the workspace leads the key.
import { type Kysely, type Migration } from 'kysely';

export const m017AnalysisCache: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('analysis_cache')
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('cache_key', 'text', (c) => c.notNull())
      .addColumn('analysis', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('analysis_cache_pk', ['workspace_id', 'cache_key'])
      .execute();
  },
};
