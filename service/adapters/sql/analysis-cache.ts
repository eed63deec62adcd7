import type { Kysely } from 'kysely';
import type { AnalysisCacheEntry, AnalysisCacheStore } from '../../ports/analysis-cache.js';
import type { DB } from './schema.js';

/**
 * The analysis cache on SQLite and PostgreSQL alike. The primary key (workspace, key) keeps one
 * analysis per key and workspace: two validations of the same project at once both store theirs,
 * the second replacing the first (they are the same analysis).
 */
export class SqlAnalysisCache implements AnalysisCacheStore {
  constructor(private readonly db: Kysely<DB>) {}

  async get(workspaceId: string, key: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('analysis_cache')
      .select('analysis')
      .where('workspace_id', '=', workspaceId)
      .where('cache_key', '=', key)
      .executeTakeFirst();
    return row?.analysis ?? null;
  }

  async put(entry: AnalysisCacheEntry): Promise<void> {
    await this.db
      .insertInto('analysis_cache')
      .values({
        workspace_id: entry.workspaceId,
        cache_key: entry.key,
        analysis: entry.analysis,
        created_at: entry.createdAt,
      })
      .onConflict((oc) =>
        oc.columns(['workspace_id', 'cache_key']).doUpdateSet((eb) => ({
          analysis: eb.ref('excluded.analysis'),
          created_at: eb.ref('excluded.created_at'),
        })),
      )
      .execute();
  }
}
