// PostgreSQL for tests: where the server is, whether to run, and a throwaway database per test.
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPostgres } from '../../service/adapters/postgres/db.js';
import { connectError, redactUrl } from '../../service/adapters/postgres/errors.js';
import { pgMigrationScripts } from '../../service/adapters/postgres/migrations.js';

/**
 * The server tests use: RENDERBRIDGE_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test (a
 * role that may create databases).
 */
export function postgresTestUrl(): string {
  return process.env.RENDERBRIDGE_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/test';
}

/** Test databases are named rb_test_<epoch seconds>_<random>; ones left by a killed run are dropped after this long. */
const STALE_AFTER_S = 6 * 3600;
const PREFIX = 'rb_test_';
/** Advisory lock (on the admin database) held while one test process builds the schema template. */
const TEMPLATE_LOCK = 7_340_512_118;

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  // An error after connect (server gone) must not crash the test process; the query reports it.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Whether the test server answers, or why not (without the password). */
export async function postgresProbe(url = postgresTestUrl()): Promise<{ ok: true } | { ok: false; reason: string }> {
  try {
    await withClient(url, (c) => c.query('select 1'));
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: connectError(err, url).message };
  }
}

/**
 * Whether tests of `what` can run: true when the server answers. Otherwise prints why and
 * returns false (skip), or throws when CI=true, where a missing server is a broken setup.
 * Use at the top of a test file: `const pgUp = await requirePostgres('...'); describe.skipIf(!pgUp)(...)`.
 */
export async function requirePostgres(what: string): Promise<boolean> {
  const probe = await postgresProbe();
  if (probe.ok) return true;
  const message =
    `${what} need PostgreSQL, which is not reachable: ${probe.reason}. Start PostgreSQL or point ` +
    `RENDERBRIDGE_TEST_PG_URL at a server.`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`SKIPPED: ${message}`);
  return false;
}

/** `url` with its database replaced by `name`. */
function databaseUrl(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Drops test databases left behind by runs that were killed before their cleanup (best effort). */
async function dropStale(c: pg.Client): Promise<void> {
  const cutoff = Math.floor(Date.now() / 1000) - STALE_AFTER_S;
  const { rows } = await c.query<{ datname: string }>('select datname from pg_database where datname like $1', [
    `${PREFIX}%`,
  ]);
  for (const { datname } of rows) {
    const created = Number(datname.slice(PREFIX.length).split('_')[0]);
    if (created < cutoff) await c.query(`drop database if exists "${datname}" with (force)`).catch(() => undefined);
  }
}

/** Creates database `name`, copied from `template` (default: PostgreSQL's empty template1). */
async function createDatabase(c: pg.Client, name: string, template?: string): Promise<void> {
  await c.query(`create database "${name}"${template ? ` template "${template}"` : ''}`);
}

/**
 * The name of a database holding the current schema (migrations applied), to copy test
 * databases from: copying skips running the migrations for every test. It is built once per
 * schema version (named by a hash of the migration scripts), by whichever test process needs it
 * first, under an advisory lock; built under a temporary name and renamed when complete.
 */
async function schemaTemplate(c: pg.Client, admin: string): Promise<string> {
  const hash = createHash('sha256').update(JSON.stringify(pgMigrationScripts)).digest('hex').slice(0, 16);
  const name = `rb_tpl_${hash}`;
  const exists = async () =>
    ((await c.query('select 1 from pg_database where datname = $1', [name])).rowCount ?? 0) > 0;
  if (await exists()) return name;
  await c.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK]);
  try {
    if (await exists()) return name;
    // A killed build leaves an rb_test_ database behind, which dropStale removes later.
    const building = `${PREFIX}${Math.floor(Date.now() / 1000)}_${randomBytes(6).toString('hex')}_tpl`;
    await createDatabase(c, building);
    const h = await openPostgres(databaseUrl(admin, building), { maxConnections: 1 });
    await h.close();
    await c.query(`alter database "${building}" rename to "${name}"`);
    return name;
  } finally {
    await c.query('select pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
  }
}

/**
 * A new database on the test server, uniquely named so parallel tests never share one. It holds
 * the current schema already (copied from a template, which is quick), or nothing at all with
 * `empty` (to test migrating). `drop()` removes it even while connections are still open.
 */
export async function createTestDatabase(
  opts: { empty?: boolean } = {},
): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const admin = postgresTestUrl();
  const name = `${PREFIX}${Math.floor(Date.now() / 1000)}_${randomBytes(6).toString('hex')}`;
  try {
    await withClient(admin, async (c) => {
      await createDatabase(c, name, opts.empty ? undefined : await schemaTemplate(c, admin));
      await dropStale(c).catch(() => undefined);
    });
  } catch (err) {
    const e = err as { message?: string; code?: string };
    const hint = e.code === '42501' ? ' (the role in RENDERBRIDGE_TEST_PG_URL needs CREATEDB)' : '';
    throw new Error(`cannot create test database ${name} on ${redactUrl(admin)}: ${e.message ?? String(err)}${hint}`, {
      cause: err,
    });
  }
  return {
    url: databaseUrl(admin, name),
    name,
    drop: () =>
      withClient(admin, (c) => c.query(`drop database if exists "${name}" with (force)`)).then(() => undefined),
  };
}
