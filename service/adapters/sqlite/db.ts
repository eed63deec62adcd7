import type Database from 'better-sqlite3';
import { Database as Driver } from './driver.js';
import { CommitWatch } from './commit-watch.js';
import { Kysely, Migrator, SqliteDialect, sql, type MigrationResultSet } from 'kysely';
import { cachedStatements } from './statement-cache.js';
import { migrations } from './migrations.js';
import type { DB } from '../sql/schema.js';

export type { DB };

export interface SqliteHandle {
  /** Query builder for writes and rare reads. */
  db: Kysely<DB>;
  /** The connection itself, for prepared statements on hot paths (a Kysely query costs ~50 us to build). */
  raw: Database.Database;
  /** Other connections' commits, for the read caches of hot paths. */
  commits: CommitWatch;
  close(): Promise<void>;
}

/**
 * Runs the migrations in one IMMEDIATE transaction. Kysely's migrator takes no lock on SQLite:
 * a service and a worker opening a new data folder at once would both run a migration ("table
 * ... already exists"). This way the second waits (busy timeout), then finds them done, and a
 * failed migration rolls back whole.
 */
async function migrate(sqlite: Database.Database, migrator: Migrator): Promise<MigrationResultSet> {
  sqlite.exec('begin immediate');
  let ok = false;
  try {
    const outcome = await migrator.migrateToLatest();
    ok = !outcome.error;
    return outcome;
  } finally {
    if (sqlite.inTransaction) sqlite.exec(ok ? 'commit' : 'rollback');
  }
}

/**
 * Switches the file to WAL. On a new file that needs an exclusive lock, and when another process
 * is switching it at the same moment SQLite answers SQLITE_BUSY at once, without waiting the busy
 * timeout (it would risk a deadlock), so a service and a worker started together retry here.
 */
async function enableWal(sqlite: Database.Database): Promise<void> {
  const until = Date.now() + 5000;
  for (;;) {
    try {
      sqlite.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
    }
  }
}

/** Opens (creating if needed) the SQLite database and brings its schema up to date. */
export async function openSqlite(file: string): Promise<SqliteHandle> {
  const sqlite = new Driver(file);
  // First: a writer that finds the file locked by another process waits up to 5 s instead of
  // failing at once (switching a new file to WAL below takes a lock too).
  sqlite.pragma('busy_timeout = 5000');
  // WAL: readers never block the writer; NORMAL sync is durable across process crashes.
  try {
    await enableWal(sqlite);
  } catch (err) {
    sqlite.close();
    throw err;
  }
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: cachedStatements(sqlite) }) });
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  let outcome: MigrationResultSet;
  try {
    outcome = await migrate(sqlite, migrator);
  } catch (err) {
    await db.destroy();
    const busy = (err as { code?: unknown }).code === 'SQLITE_BUSY';
    const hint = busy ? ' (another process kept the database locked for over 5 s: try again)' : '';
    throw new Error(`cannot bring the database ${file} up to date: ${String(err)}${hint}`, { cause: err });
  }
  const { error, results } = outcome;
  if (error) {
    await db.destroy();
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${String(error)}`);
  }
  return { db, raw: sqlite, commits: new CommitWatch(sqlite), close: () => db.destroy() };
}

export { sql };
