import pg from 'pg';
import { Kysely, Migrator, PostgresDialect } from 'kysely';
import type { DB } from '../sql/schema.js';
import { checkUrl, connectError, scrub } from './errors.js';
import { pgMigrations } from './migrations.js';
import { prepareMarked } from './prepared.js';

/**
 * The PostgreSQL tables as the query layer sees them: the same TypeScript shape as SQLite's, so
 * the shared queries in ../sql run on both (int8 columns are read as numbers, see int8Types).
 */
export type PgDB = DB;

export interface PostgresOptions {
  /** Most connections this process opens to the server. Default 10. */
  maxConnections?: number;
  /** How long a query waits for a free or new connection before failing. Default 10 000 ms. */
  connectTimeoutMs?: number;
  /**
   * Told when an idle pooled connection fails (a server restart, a network cut); the pool drops
   * it and opens another on the next query. Default: a warning on stderr, without the password.
   */
  onIdleError?: (err: Error) => void;
}

export interface PostgresHandle {
  db: Kysely<PgDB>;
  /** Waits for queries in flight and closes every connection. */
  close(): Promise<void>;
}

const INT8_OID = 20;

function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n))
    throw new Error(`PostgreSQL returned the bigint ${text}, beyond what a JavaScript number holds exactly`);
  return n;
}

/**
 * Reads int8 (bigint, count(*), sum of integers) as a number for this pool only: epoch-ms times,
 * sizes and row counts all fit in 2^53. pg's global parsers are left alone.
 */
const int8Types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? parseInt8
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * Connects to the PostgreSQL database at `url` and brings its schema up to date. Several service
 * instances may start at once: kysely's Migrator holds a PostgreSQL advisory lock (scoped to the
 * database) while it migrates, so one runs the migrations and the others then find them done.
 */
export async function openPostgres(url: string, opts: PostgresOptions = {}): Promise<PostgresHandle> {
  checkUrl(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.maxConnections ?? 10,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    application_name: 'renderbridge',
    types: int8Types,
  });
  const onIdleError =
    opts.onIdleError ??
    ((err: Error) =>
      console.warn(
        `renderbridge: an idle PostgreSQL connection failed (${scrub(err.message, url)}); it is replaced on ` +
          `the next query`,
      ));
  // Without a listener, an idle connection's error would crash the process.
  pool.on('error', onIdleError);
  pool.on('connect', prepareMarked);
  try {
    await pool.query('select 1');
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw connectError(err, url);
  }
  const db = new Kysely<PgDB>({ dialect: new PostgresDialect({ pool }) });
  const migrator = new Migrator({ db, provider: { getMigrations: async () => pgMigrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    await db.destroy();
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`PostgreSQL migration ${failed} failed: ${scrub(String(error), url)}`);
  }
  return { db, close: () => db.destroy() };
}
