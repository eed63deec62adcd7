// Kysely's SQLite driver prepares every query again (better-sqlite3's prepare parses and plans the
// SQL each time), which was the largest single CPU cost of a render's bookkeeping: the same few
// dozen statements run for every frame, claim and progress write. Statements are reusable, so the
// database kysely sees hands out one prepared statement per SQL text.
import type { Database, Statement } from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/**
 * `db` as kysely's dialect wants it, with prepared statements kept per SQL text. At most `max`
 * (default 500) are kept, least recently used dropped first: queries built with IN lists of
 * varying length have many texts, and each kept statement holds SQLite memory.
 */
export function cachedStatements(db: Database, max = 500): SqliteDatabase {
  const cache = new Map<string, Statement>();
  return {
    close: () => {
      cache.clear();
      db.close();
    },
    prepare: (sql: string) => {
      let stmt = cache.get(sql);
      if (stmt) {
        // Map order is insertion order: re-inserting marks it most recently used.
        cache.delete(sql);
      } else {
        stmt = db.prepare(sql);
        if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      }
      cache.set(sql, stmt);
      return stmt as unknown as ReturnType<SqliteDatabase['prepare']>;
    },
  };
}
