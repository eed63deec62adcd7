// The analysis cache as the worker's validate handler needs it: a scene analysis stored under a key that
// names everything the analysis read (analysis-key.ts), within one workspace. Adapters: the SQL
// one (service/adapters/sql/analysis-cache.ts) on SQLite and PostgreSQL alike.

/** One stored analysis. */
export interface AnalysisCacheEntry {
  workspaceId: string;
  /** analysisCacheKey's hex digest. */
  key: string;
  /** The analysis as JSON, with the job's folders replaced by placeholders (cached-analysis.ts). */
  analysis: string;
  /** ISO-8601. */
  createdAt: string;
}

export interface AnalysisCacheStore {
  /** The analysis stored under `key` in this workspace; null when none. Never another workspace's. */
  get(workspaceId: string, key: string): Promise<string | null>;
  /** Stores it; a second put of the same workspace and key replaces the first (two validations at once). */
  put(entry: AnalysisCacheEntry): Promise<void>;
}
