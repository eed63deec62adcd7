import Database from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql, type Generated, type Migration } from 'kysely';

export interface DB {
  workspaces: { id: string; name: string; created_at: string };
  users: { id: string; workspace_id: string; name: string; created_at: string };
  api_keys: {
    id: string;
    workspace_id: string;
    user_id: string;
    label: string;
    key_hash: Buffer;
    display_prefix: string;
    created_at: string;
    revoked_at: string | null;
  };
  uploads: {
    slug: string;
    workspace_id: string;
    user_id: string;
    file_name: string;
    file_type: string;
    object_key: string;
    expires_at: string;
    created_at: string;
    completed_at: string | null;
    size: number | null;
    sha256: string | null;
    job_id: string | null;
  };
  jobs: {
    seq: Generated<number>;
    id: string;
    workspace_id: string;
    status: string;
    created_at: string;
    updated_at: string;
    doc: string;
    internal: string;
    /** The preview object to sign when serving the job; null when there is none or outputs are deleted. */
    preview_key: string | null;
    /** output.scheduledForDeletionAt while the outputs still exist, else null (006). */
    delete_after: string | null;
  };
  job_counts: { workspace_id: string; status: string; n: number };
  task_deps: { task_id: string; dep_id: string };
  job_progress: { job_id: string; workspace_id: string; doc: string; updated_at: string };
  tasks: {
    seq: Generated<number>;
    id: string;
    job_id: string;
    kind: string;
    payload: string;
    state: string;
    attempts: number;
    run_after: number;
    worker_id: string | null;
    lease_until: number | null;
    last_error: string | null;
    created_at: string;
    updated_at: string;
  };
  /** One webhook endpoint per workspace (004_webhooks). */
  webhooks: { workspace_id: string; url: string; secret: string; created_at: string; updated_at: string };
  /** Outbox of webhook deliveries, one per event id (004_webhooks). Times in epoch ms. */
  webhook_deliveries: {
    seq: Generated<number>;
    id: string;
    workspace_id: string;
    job_id: string;
    event: string;
    payload: string;
    state: string;
    attempts: number;
    next_attempt_at: number | null;
    last_status: number | null;
    last_error: string | null;
    created_at: string;
    updated_at: string;
    delivered_at: string | null;
  };
}

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
};

export interface SqliteHandle {
  /** Query builder for writes and rare reads. */
  db: Kysely<DB>;
  /** The connection itself, for prepared statements on hot paths (a Kysely query costs ~50 us to build). */
  raw: Database.Database;
  close(): Promise<void>;
}

/** Opens (creating if needed) the SQLite database and brings its schema up to date. */
export async function openSqlite(file: string): Promise<SqliteHandle> {
  const sqlite = new Database(file);
  // WAL: readers never block the writer; NORMAL sync is durable across process crashes.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }) });
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    await db.destroy();
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${String(error)}`);
  }
  return { db, raw: sqlite, close: () => db.destroy() };
}

export { sql };
