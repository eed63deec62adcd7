// The PostgreSQL schema. The tables match the SQLite ones (../sql/schema.ts) with PostgreSQL
// types: bytea for key hashes, bigint for epoch-ms times, sizes and sequence numbers. Times the
// API echoes (created_at, expires_at, ...) stay ISO-8601 text: they round-trip byte for byte, and
// fixed-width ISO strings compare in time order (delete_after relies on it). Job documents are
// text, not jsonb, so reads can splice a signed preview URL into the stored text as is.
import { sql, type Kysely, type Migration } from 'kysely';

/** Each migration's DDL statements, by migration name (applied in name order). */
export const pgMigrationScripts: Record<string, string[]> = {
  '001_initial': [
    `create table workspaces (id text primary key, name text not null unique, created_at text not null)`,
    `create table users (
      id text primary key, workspace_id text not null references workspaces (id), name text not null,
      created_at text not null, constraint users_ws_name unique (workspace_id, name))`,
    `create table api_keys (
      id text primary key, workspace_id text not null references workspaces (id), user_id text not null references \
users (id),
      label text not null, key_hash bytea not null unique, display_prefix text not null, created_at text not null, \
revoked_at text)`,
    `create table uploads (
      slug text primary key, workspace_id text not null, user_id text not null, file_name text not null, file_type \
text not null,
      object_key text not null, expires_at text not null, created_at text not null, completed_at text,
      size bigint, sha256 text, job_id text)`,
    // preview_key: the object to sign when serving the job (null: none, or outputs deleted).
    // delete_after: output.scheduledForDeletionAt while the outputs still exist, else null.
    `create table jobs (
      seq bigint generated always as identity primary key, id text not null unique, workspace_id text not null,
      status text not null, created_at text not null, updated_at text not null, doc text not null, internal text not \
null,
      preview_key text, delete_after text)`,
    `create index jobs_ws_seq on jobs (workspace_id, seq)`,
    `create index jobs_ws_status_seq on jobs (workspace_id, status, seq)`,
    `create index jobs_delete_after on jobs (delete_after) where delete_after is not null`,
    // Per-workspace, per-status counts kept in step with every job write: list totals are O(1).
    `create table job_counts (workspace_id text not null, status text not null, n integer not null, primary ` +
      `key (workspace_id, status))`,
    `create table job_progress (job_id text primary key, workspace_id text not null, doc text not null, ` +
      `updated_at text not null)`,
    `create table tasks (
      seq bigint generated always as identity primary key, id text not null unique, job_id text not null, kind text \
not null,
      payload text not null, state text not null, attempts integer not null default 0, run_after bigint not null,
      worker_id text, lease_until bigint, last_error text, created_at text not null, updated_at text not null)`,
    `create index tasks_ready on tasks (state, kind, run_after, seq)`,
    `create index tasks_job on tasks (job_id)`,
    // A task may wait for others (a job's finalize waits for its render chunks).
    `create table task_deps (task_id text not null, dep_id text not null, primary key (task_id, dep_id))`,
    // Failed tasks per worker and job: the per-job blocklist.
    `create table task_failures (job_id text not null, worker text not null, n integer not null, primary key ` +
      `(job_id, worker))`,
    // Named leases for scheduled work that runs once across instances (epoch ms).
    `create table leases (name text primary key, holder text not null, "until" bigint not null)`,
    `create table webhooks (workspace_id text primary key, url text not null, secret text not null, ` +
      `created_at text not null, updated_at text not null)`,
    `create table webhook_deliveries (
      seq bigint generated always as identity primary key, id text not null unique, workspace_id text not null,
      job_id text not null, event text not null, payload text not null, state text not null, attempts integer not null \
default 0,
      next_attempt_at bigint, last_status integer, last_error text, created_at text not null, updated_at text not \
null, delivered_at text)`,
    `create index webhook_deliveries_due on webhook_deliveries (state, next_attempt_at, seq)`,
    `create index webhook_deliveries_job on webhook_deliveries (job_id, seq)`,
  ],
  // A claim walks each kind's queued tasks in enqueue order and stops at the first it may take.
  '002_task_claim_order': [`create index tasks_claim on tasks (state, kind, seq)`, `drop index tasks_ready`],
  // Pruning finished tasks deletes the dependencies that name them (dep_id) too.
  '003_task_deps_by_dep': [`create index task_deps_dep on task_deps (dep_id)`],
  // The content-addressed upload extension: blobs each workspace holds (times in epoch ms;
  // collecting_since set while the collector deletes one), which committed uploads reference
  // them, multi-part uploads in progress, and the secret every instance signs blob part URLs with.
  '004_blobs': [
    `alter table uploads add column source_format text`,
    `create table blobs (
      workspace_id text not null, sha256 text not null, size bigint not null, created_at text not null,
      last_used_at bigint not null, collecting_since bigint, primary key (workspace_id, sha256, size))`,
    `create index blobs_last_used on blobs (last_used_at)`,
    `create table blob_refs (
      slug text not null, workspace_id text not null, sha256 text not null, size bigint not null, primary key (slug, \
sha256, size))`,
    `create index blob_refs_blob on blob_refs (workspace_id, sha256, size)`,
    `create table blob_uploads (
      workspace_id text not null, sha256 text not null, size bigint not null, part_size bigint not null, updated_at \
bigint not null,
      primary key (workspace_id, sha256, size, part_size))`,
    `create index blob_uploads_updated on blob_uploads (updated_at)`,
    `create table service_secrets (name text primary key, value text not null)`,
  ],
  // The dashboard: sessions (an API key exchanged for a cookie; only the id's SHA-256 stored; times
  // in epoch ms), and per task when its latest attempt started and who ran it, kept once it ends.
  '005_dashboard': [
    `create table sessions (
      id_hash bytea primary key, key_id text not null, workspace_id text not null, user_id text not null,
      created_at bigint not null, last_seen_at bigint not null, expires_at bigint not null)`,
    `create index sessions_expires on sessions (expires_at)`,
    `create index sessions_last_seen on sessions (last_seen_at)`,
    `alter table tasks add column started_at text, add column ran_by text`,
  ],
  // The worker registry: each worker process's latest report and when it arrived (epoch ms).
  '006_workers': [
    `create table workers (id text primary key, doc text not null, heartbeat_at bigint not null)`,
    `create index workers_heartbeat on workers (heartbeat_at)`,
  ],
  // Requeues (job-requeue extension): one new job per old job and frame selection, and the upload it renders.
  '007_job_requeues': [
    `create table job_requeues (source_job_id text not null, selection text not null, job_id text not null unique,
      workspace_id text not null, upload_slug text, created_at text not null, primary key (source_job_id, selection))`,
    `create index job_requeues_slug on job_requeues (upload_slug)`,
  ],
  // Per-worker credentials of the worker API: only each token's SHA-256 is stored. At most one
  // active token per worker name (the name is the worker's identity in leases and heartbeats).
  '008_worker_tokens': [
    `create table worker_tokens (id text primary key, name text not null, token_hash bytea not null unique,
      display_prefix text not null, created_at text not null, last_used_at text, revoked_at text)`,
    `create unique index worker_tokens_active_name on worker_tokens (name) where revoked_at is null`,
  ],
  // The workspace storage quota sums each job's published output bytes; jobs finished before
  // this migration count 0 until their next write. An index per workspace keeps the upload sum cheap.
  '009_job_output_bytes': [
    `alter table jobs add column output_bytes int8 not null default 0`,
    `create index uploads_ws on uploads (workspace_id)`,
  ],
  // Per-frame statistics (frame-stats extension): one row per job, frame and task attempt.
  '010_frame_stats': [
    `create table frame_stats (job_id text not null, frame integer not null, attempt integer not null,
      render_seconds double precision not null, peak_memory_bytes bigint, device text not null, slot text not null,
      blender_version text, finished_at text not null, primary key (job_id, frame, attempt))`,
    // The ETA reads a job's latest frames to finish on every progress poll.
    `create index frame_stats_job_finished on frame_stats (job_id, finished_at)`,
  ],
  // Scene analyses the validate handler may reuse (service/worker/analysis-cache), by workspace first.
  '011_analysis_cache': [
    `create table analysis_cache (workspace_id text not null, cache_key text not null, analysis text not null,
      created_at text not null, primary key (workspace_id, cache_key))`,
  ],
  // Priorities, fair share and pause (../sql/share-tags.ts, ../sql/task-claim.ts): a claim walks each
  // kind's queued tasks in (priority desc, tag, seq) order; tasks_group finds a group's queued tags
  // when they are rescaled. Tasks queued before keep their order (tag = seq, group '').
  '012_task_scheduling': [
    `alter table tasks add column priority integer not null default 0, add column share_group text not null ` +
      `default '', add column tag double precision not null default 0, add column units integer not null default 0`,
    `update tasks set tag = seq`,
    `create index tasks_order on tasks (state, kind, priority desc, tag, seq)`,
    `create index tasks_group on tasks (share_group, state, tag)`,
    `drop index tasks_claim`,
    `create table job_sched (job_id text primary key, priority integer, share_group text, ` +
      `paused integer not null default 0)`,
    `create table share_groups (grp text primary key, last_tag double precision not null, ` +
      `spf double precision not null, spf_tag double precision not null, measured integer not null default 0, ` +
      `retag_at bigint not null default 0)`,
    `create table share_weights (grp text primary key, weight double precision not null)`,
  ],
  // Tasks released waiting for other jobs to end (../sql/task-waits.ts): which task waits for which
  // job, and per awaited job when it ended (null until then; the row a release and a wake both lock first).
  '013_dependency_waits': [
    `create table task_waits (task_id text not null, job_id text not null, primary key (task_id, job_id))`,
    `create index task_waits_job on task_waits (job_id)`,
    `create table job_ends (job_id text primary key, ended_at bigint)`,
  ],
};

/**
 * The migrations for kysely's Migrator. Each sends its statements as one script: a query
 * without parameters may hold several, and one round trip keeps startup (and every test
 * database) quick. The Migrator wraps each migration in a transaction.
 */
export const pgMigrations: Record<string, Migration> = Object.fromEntries(
  Object.entries(pgMigrationScripts).map(([name, statements]) => [
    name,
    {
      async up(db: Kysely<unknown>) {
        await sql.raw(statements.join(';\n')).execute(db);
      },
    },
  ]),
);
