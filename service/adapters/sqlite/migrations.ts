// The SQLite schema's migrations, in order: each runs once per database file (kysely's Migrator
// records them), and a migration never changes once released, so old files upgrade step by step.
import { sql, type Kysely, type Migration } from 'kysely';

export const migrations: Record<string, Migration> = {
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
      await sql`insert into job_counts (workspace_id, status, n)
        select workspace_id, status, count(*) from jobs group by workspace_id, status`.execute(db);
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
      await db.schema
        .createIndex('webhook_deliveries_due')
        .on('webhook_deliveries')
        .columns(['state', 'next_attempt_at', 'seq'])
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_job')
        .on('webhook_deliveries')
        .columns(['job_id', 'seq'])
        .execute();
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
      await db.schema
        .createIndex('jobs_delete_after')
        .on('jobs')
        .column('delete_after')
        .where(sql.ref('delete_after'), 'is not', null)
        .execute();
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
      await db.schema
        .createIndex('blob_refs_blob')
        .on('blob_refs')
        .columns(['workspace_id', 'sha256', 'size'])
        .execute();
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
  '012_workers': {
    // The worker registry: each worker process's latest report and when it arrived (epoch ms).
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('workers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('doc', 'text', (c) => c.notNull())
        .addColumn('heartbeat_at', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('workers_heartbeat').on('workers').column('heartbeat_at').execute();
    },
  },
  '013_job_requeues': {
    // Requeues (job-requeue extension): one new job per old job and frame selection, and the upload it renders.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('job_requeues')
        .addColumn('source_job_id', 'text', (c) => c.notNull())
        .addColumn('selection', 'text', (c) => c.notNull())
        .addColumn('job_id', 'text', (c) => c.notNull().unique())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('upload_slug', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('job_requeues_pk', ['source_job_id', 'selection'])
        .execute();
      await db.schema.createIndex('job_requeues_slug').on('job_requeues').column('upload_slug').execute();
    },
  },
  '014_worker_tokens': {
    // Per-worker credentials of the worker API: only each token's SHA-256 is stored. At most one
    // active token per worker name (the name is the worker's identity in leases and heartbeats).
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('worker_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'blob', (c) => c.notNull().unique())
        .addColumn('display_prefix', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await sql`create unique index worker_tokens_active_name on worker_tokens (name) where revoked_at is null`.execute(
        db,
      );
    },
  },
  '015_job_output_bytes': {
    // The workspace storage quota sums each job's published output bytes; jobs finished before
    // this migration count 0 until their next write. An index per workspace keeps the upload sum cheap.
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('jobs')
        .addColumn('output_bytes', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('uploads_ws').on('uploads').column('workspace_id').execute();
    },
  },
  '016_frame_stats': {
    // Per-frame statistics (frame-stats extension): one row per job, frame and task attempt.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('frame_stats')
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('frame', 'integer', (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('render_seconds', 'real', (c) => c.notNull())
        .addColumn('peak_memory_bytes', 'integer')
        .addColumn('device', 'text', (c) => c.notNull())
        .addColumn('slot', 'text', (c) => c.notNull())
        .addColumn('blender_version', 'text')
        .addColumn('finished_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('frame_stats_pk', ['job_id', 'frame', 'attempt'])
        .execute();
      // The ETA reads a job's latest frames to finish on every progress poll.
      await db.schema
        .createIndex('frame_stats_job_finished')
        .on('frame_stats')
        .columns(['job_id', 'finished_at'])
        .execute();
    },
  },
  '017_analysis_cache': {
    // Scene analyses the validate handler may reuse (service/worker/analysis-cache): only ever read
    // within their workspace, hence the workspace leads the key.
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
  },
};
