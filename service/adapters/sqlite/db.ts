import Database from 'better-sqlite3';
import { CommitWatch } from './commit-watch.js';
import { Kysely, Migrator, SqliteDialect, sql, type Migration, type MigrationResultSet } from 'kysely';
import type { DB } from '../sql/schema.js';

export type { DB };

const migrations: Record<string, Migration> = {
  '001_initial': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('workspaces')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('users_ws_name', ['workspace_id', 'name'])
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'blob', (c) => c.notNull().unique())
        .addColumn('display_prefix', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema
        .createTable('uploads')
        .addColumn('slug', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('file_name', 'text', (c) => c.notNull())
        .addColumn('file_type', 'text', (c) => c.notNull())
        .addColumn('object_key', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('completed_at', 'text')
        .addColumn('size', 'integer')
        .addColumn('sha256', 'text')
        .addColumn('job_id', 'text')
        .execute();
      await db.schema
        .createTable('jobs')
        .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('doc', 'text', (c) => c.notNull())
        .addColumn('internal', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('jobs_ws_seq').on('jobs').columns(['workspace_id', 'seq']).execute();
      await db.schema.createIndex('jobs_ws_status_seq').on('jobs').columns(['workspace_id', 'status', 'seq']).execute();
      await db.schema
        .createTable('job_progress')
        .addColumn('job_id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('doc', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('tasks')
        .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('run_after', 'integer', (c) => c.notNull())
        .addColumn('worker_id', 'text')
        .addColumn('lease_until', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tasks_ready').on('tasks').columns(['state', 'kind', 'run_after', 'seq']).execute();
      await db.schema.createIndex('tasks_job').on('tasks').columns(['job_id']).execute();
    },
  },
  '002_job_counts': {
    // Per-workspace, per-status job counts kept in step with every write, so list totals are O(1).
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('job_counts')
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('n', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('job_counts_pk', ['workspace_id', 'status'])
        .execute();
      await sql`insert into job_counts (workspace_id, status, n) select workspace_id, status, count(*) from jobs group by workspace_id, status`.execute(db);
    },
  },
  '003_job_preview_key': {
    // Reads serve the stored job JSON as is and only splice in a signed preview URL: the key to
    // sign lives in a column, so serving never parses the job or its internal state.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('jobs').addColumn('preview_key', 'text').execute();
      await sql`update jobs set preview_key = json_extract(internal, '$.previewKey')
        where json_extract(doc, '$.output.isDeletedForClient') is not 1`.execute(db);
    },
  },
  '004_webhooks': {
    // Webhook endpoints and a durable delivery outbox: pending deliveries survive restarts.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('webhooks')
        .addColumn('workspace_id', 'text', (c) => c.primaryKey())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'integer')
        .addColumn('last_status', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('delivered_at', 'text')
        .execute();
      await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at', 'seq']).execute();
      await db.schema.createIndex('webhook_deliveries_job').on('webhook_deliveries').columns(['job_id', 'seq']).execute();
    },
  },
  '005_task_deps': {
    // A task may wait for others (a job's finalize waits for its render chunks): the join is
    // data in the queue, so no worker has to survive to start it.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('task_deps')
        .addColumn('task_id', 'text', (c) => c.notNull())
        .addColumn('dep_id', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('task_deps_pk', ['task_id', 'dep_id'])
        .execute();
    },
  },
  '006_job_delete_after': {
    // When a completed job's outputs expire (output.scheduledForDeletionAt), indexed for the sweeper.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('jobs').addColumn('delete_after', 'text').execute();
      await sql`update jobs set delete_after = json_extract(doc, '$.output.scheduledForDeletionAt')
        where json_extract(doc, '$.output.isDeletedForClient') is not 1`.execute(db);
      await db.schema.createIndex('jobs_delete_after').on('jobs').column('delete_after').where(sql.ref('delete_after'), 'is not', null).execute();
    },
  },
  '007_blocklist_leases': {
    // Per-job worker failures (the blocklist) and leases for scheduled work (one instance runs it).
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('task_failures')
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('worker', 'text', (c) => c.notNull())
        .addColumn('n', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('task_failures_pk', ['job_id', 'worker'])
        .execute();
      await db.schema
        .createTable('leases')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('holder', 'text', (c) => c.notNull())
        .addColumn('until', 'integer', (c) => c.notNull())
        .execute();
    },
  },
  '008_task_claim_order': {
    // A claim walks each kind's queued tasks in enqueue order and stops at the first it may take.
    // tasks_ready goes: with run_after before seq the planner chose it and sorted the backlog.
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('tasks_claim').on('tasks').columns(['state', 'kind', 'seq']).execute();
      await db.schema.dropIndex('tasks_ready').execute();
    },
  },
  '009_task_deps_by_dep': {
    // Pruning finished tasks deletes the dependencies that name them (dep_id) too.
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('task_deps_dep').on('task_deps').column('dep_id').execute();
    },
  },
  '010_blobs': {
    // The content-addressed upload extension: blobs each workspace holds, which committed uploads
    // reference them, multi-part uploads in progress, and the secret signing blob part URLs.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('uploads').addColumn('source_format', 'text').execute();
      await db.schema
        .createTable('blobs')
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'integer', (c) => c.notNull())
        .addColumn('collecting_since', 'integer')
        .addPrimaryKeyConstraint('blobs_pk', ['workspace_id', 'sha256', 'size'])
        .execute();
      await db.schema.createIndex('blobs_last_used').on('blobs').column('last_used_at').execute();
      await db.schema
        .createTable('blob_refs')
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('blob_refs_pk', ['slug', 'sha256', 'size'])
        .execute();
      await db.schema.createIndex('blob_refs_blob').on('blob_refs').columns(['workspace_id', 'sha256', 'size']).execute();
      await db.schema
        .createTable('blob_uploads')
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('part_size', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('blob_uploads_pk', ['workspace_id', 'sha256', 'size', 'part_size'])
        .execute();
      await db.schema.createIndex('blob_uploads_updated').on('blob_uploads').column('updated_at').execute();
      await db.schema
        .createTable('service_secrets')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '011_dashboard': {
    // The dashboard: sessions (an API key exchanged for a cookie; only the id's SHA-256 stored),
    // and per task when its latest attempt started and who ran it, kept once the task ends.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('sessions')
        .addColumn('id_hash', 'blob', (c) => c.primaryKey())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('last_seen_at', 'integer', (c) => c.notNull())
        .addColumn('expires_at', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();
      await db.schema.createIndex('sessions_last_seen').on('sessions').column('last_seen_at').execute();
      await db.schema.alterTable('tasks').addColumn('started_at', 'text').execute();
      await db.schema.alterTable('tasks').addColumn('ran_by', 'text').execute();
    },
  },
};

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
  const sqlite = new Database(file);
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
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }) });
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
