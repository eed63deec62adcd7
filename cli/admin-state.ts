// Where `renderbridge admin` finds the service's state, and why it never creates one by
// accident: a command that silently made a fresh empty database (run from another folder, a typo
// in --data-dir, a PostgreSQL database the service never started on) printed a key that the
// running service had never heard of. The data folder is resolved exactly as `renderbridge
// service` resolves it, named on stderr (stdout stays the key alone, for `| tail -n1`), and a
// missing database is an error unless `--init` asks for one.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { ServiceConfig } from '../service/config.js';
import { LEGACY_DATA_DIR } from '../service/config-defaults.js';
import { SQLITE_FILE_NAME, type StateEngine } from '../service/local-stack.js';
import { openState } from '../service/stack.js';
import { databaseOption } from './engines.js';
import { CliError } from './errors.js';
import { DATA_DIR_DEFAULT, resolveDataDir, type ResolvedDataDir } from './options.js';

export interface AdminStateOptions {
  /** `--data-dir`; default RENDERBRIDGE_DATA_DIR, else the stable default (resolveDataDir). */
  dataDir?: string;
  /** `--database-url` / RENDERBRIDGE_DATABASE_URL: PostgreSQL instead of SQLite. Default none. */
  databaseUrl?: string;
  /** `--init`: create (or migrate) the database when it is missing. Default false: refuse. */
  init?: boolean;
}

/** Adds `--data-dir` and `--database-url`, and `--init` to the commands that may start a database. */
export function addStateOptions(cmd: Command, opts: { init?: boolean } = {}): Command {
  cmd
    .option('--data-dir <dir>', `the service's data folder (default: ${DATA_DIR_DEFAULT})`)
    .addOption(databaseOption());
  if (opts.init)
    cmd.option(
      '--init',
      'create the database when there is none yet (default: refuse, so a wrong folder or database is noticed)',
    );
  return cmd;
}

function describe(d: ResolvedDataDir): string {
  return d.from === 'default' ? 'the default data folder' : `from ${d.from}`;
}

/** Opens the state the service uses, or throws a CliError saying what to do; creates nothing without `init`. */
export async function openAdminState(o: AdminStateOptions): Promise<StateEngine> {
  if (o.databaseUrl) {
    const { redactUrl } = await import('../service/adapters/postgres/errors.js');
    const where = redactUrl(o.databaseUrl);
    if (!o.init) await requireMigratedPostgres(o.databaseUrl, where);
    console.error(`renderbridge admin: using the PostgreSQL database ${where}`);
    return openState({ dataDir: '', databaseUrl: o.databaseUrl } as ServiceConfig);
  }
  const d = resolveDataDir(o.dataDir);
  const exists = existsSync(path.join(d.dir, SQLITE_FILE_NAME));
  if (!exists && !o.init) throw new CliError(noDatabaseMessage(d));
  console.error(
    `renderbridge admin: using data folder ${d.dir} ` +
      `(${describe(d)})${exists ? '' : '; created a new database there (--init)'}`,
  );
  return openState({ dataDir: d.dir, databaseUrl: undefined } as ServiceConfig);
}

function noDatabaseMessage(d: ResolvedDataDir): string {
  const lines = [
    `no renderbridge database in ${d.dir} (${describe(d)}); nothing was created.`,
    'Start the service first (`renderbridge service` creates it), pass --data-dir DIR (or set ' +
      "RENDERBRIDGE_DATA_DIR) naming the service's data folder, or add --init to create a new one there.",
  ];
  // Versions before the stable default kept the data in ./.renderbridge/service of whatever folder the service ran in.
  const legacy = path.resolve(LEGACY_DATA_DIR);
  if (legacy !== d.dir && existsSync(path.join(legacy, SQLITE_FILE_NAME))) {
    lines.push(
      `${legacy} holds a database (the data folder of earlier versions): pass --data-dir ${LEGACY_DATA_DIR} to use it.`,
    );
  }
  return lines.join('\n');
}

/**
 * Refuses a PostgreSQL database the service has not set up (or set up for an older version) at this version's schema.
 */
export async function requireMigratedPostgres(url: string, where: string): Promise<void> {
  const [{ default: pg }, { checkUrl, connectError }, { pgMigrations }] = await Promise.all([
    import('pg'),
    import('../service/adapters/postgres/errors.js'),
    import('../service/adapters/postgres/migrations.js'),
  ]);
  checkUrl(url);
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    application_name: 'renderbridge admin',
  });
  // An error after connect (server gone) must not crash the process; the query reports it.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    throw connectError(err, url);
  }
  try {
    // Kysely's migrator records applied migrations in kysely_migration (on the search path).
    const table = await client.query<{ t: string | null }>("select to_regclass('kysely_migration')::text as t");
    const done = table.rows[0]?.t
      ? new Set((await client.query<{ name: string }>('select name from kysely_migration')).rows.map((r) => r.name))
      : new Set<string>();
    const missing = Object.keys(pgMigrations).filter((n) => !done.has(n));
    if (missing.length === 0) return;
    const fresh = done.size === 0;
    throw new CliError(
      fresh
        ? `the PostgreSQL database ${where} has no renderbridge tables; nothing was created.\nStart the ` +
            `service on it first (it creates them), check --database-url (or RENDERBRIDGE_DATABASE_URL), or add ` +
            `--init to create them from here.`
        : `the PostgreSQL database ${where} lacks this version's schema changes (${missing.join(', ')}); nothing ` +
            'was changed.\nUpgrade and restart the service (it migrates), or add --init to migrate from here.',
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
