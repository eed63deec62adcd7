// The tables of the service's state, as the query layer sees them. The SQLite and PostgreSQL
// schemas differ in column types but map to these same TypeScript types (PostgreSQL int8 is
// read as a number, times the API echoes are ISO-8601 text in both), so the queries in this
// folder run on either engine unchanged.
import type { Generated } from 'kysely';

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
    /** `blobs` for a committed blob project (content-addressed upload extension), else null: one object (010 / 004). */
    source_format: string | null;
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
    /**
     * Bytes of the job's published outputs while they exist, else 0: the workspace storage quota sums it (015 / 009).
     */
    output_bytes: number;
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
    /** When the latest attempt was claimed (ISO), null before the first claim (011 / 005). */
    started_at: string | null;
    /** The worker that claimed the latest attempt; unlike worker_id, kept once the task ends (011 / 005). */
    ran_by: string | null;
    /** Claimed before every task of a lower one (018 / 012). */
    priority: number;
    /** The fair-share group the task's slot time is charged to ('' when none was named; 018 / 012). */
    share_group: string;
    /** Its virtual finish tag in the group's fair share (./share-tags.ts); lower is claimed first (018 / 012). */
    tag: number;
    /** What it costs in the fair share: its frames, 0 for tasks that render none (018 / 012). */
    units: number;
  };
  /** Per job: its priority and share group (null until named) and whether it is paused (018 / 012). */
  job_sched: { job_id: string; priority: number | null; share_group: string | null; paused: number };
  /**
   * Per fair-share group (018 / 012): the finish tag of its latest task, its measured slot seconds per
   * unit (spf; measured 0 while it is a guess) and the spf its queued tasks' tags were computed with (spf_tag).
   */
  share_groups: { grp: string; last_tag: number; spf: number; spf_tag: number; measured: number; retag_at: number };
  /** The operator's fair-share weights (018 / 012); a group without a row weighs 1. */
  share_weights: { grp: string; weight: number };
  /** Which task waits for which job to end (019 / 013; ./task-waits.ts). */
  task_waits: { task_id: string; job_id: string };
  /** Per job some task waited for: when it ended, epoch ms (null until then; 019 / 013). */
  job_ends: { job_id: string; ended_at: number | null };
  /** Failed tasks per worker and job: the per-job blocklist (007). */
  task_failures: { job_id: string; worker: string; n: number };
  /** Named leases for scheduled work that runs once across instances (007). Times in epoch ms. */
  leases: { name: string; holder: string; until: number };
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
  /**
   * Verified blobs each workspace holds (content-addressed uploads, 010 / 004). last_used_at and
   * collecting_since in epoch ms; collecting_since is set while the collector deletes the blob.
   */
  blobs: {
    workspace_id: string;
    sha256: string;
    size: number;
    created_at: string;
    last_used_at: number;
    collecting_since: number | null;
  };
  /** Which committed upload (slug) needs which blob: a live upload or job keeps its blobs. */
  blob_refs: { slug: string; workspace_id: string; sha256: string; size: number };
  /** Multi-part blobs whose parts are being stored, for collecting abandoned ones (epoch ms). */
  blob_uploads: { workspace_id: string; sha256: string; size: number; part_size: number; updated_at: number };
  /** Secrets the service instances sharing this database share (the blob URL-signing key). */
  service_secrets: { name: string; value: string };
  /** Dashboard sessions (011 / 005): the SHA-256 of each session id, never the id. Times in epoch ms. */
  sessions: {
    id_hash: Buffer;
    key_id: string;
    workspace_id: string;
    user_id: string;
    created_at: number;
    last_seen_at: number;
    expires_at: number;
  };
  /** The worker registry (012 / 006): each worker process's latest report (JSON) and when it arrived (epoch ms). */
  workers: { id: string; doc: string; heartbeat_at: number };
  /**
   * Requeues (013 / 007): the job made from `source_job_id` for a frame selection ('' = every frame it
   * lacked), and the upload it renders.
   */
  job_requeues: {
    source_job_id: string;
    selection: string;
    job_id: string;
    workspace_id: string;
    upload_slug: string | null;
    created_at: string;
  };
  /** Per-worker tokens of the worker API (014 / 008): the SHA-256 of each token, never the token. */
  worker_tokens: {
    id: string;
    name: string;
    token_hash: Buffer;
    display_prefix: string;
    created_at: string;
    last_used_at: string | null;
    revoked_at: string | null;
  };
  /** Per-frame statistics (016 / 010): one row per job, frame and task attempt. */
  frame_stats: {
    job_id: string;
    frame: number;
    attempt: number;
    render_seconds: number;
    peak_memory_bytes: number | null;
    device: string;
    slot: string;
    blender_version: string | null;
    finished_at: string;
  };
  /** Scene analyses by workspace and analysis key (017 / 011; service/worker/analysis-cache). */
  analysis_cache: {
    workspace_id: string;
    cache_key: string;
    analysis: string;
    created_at: string;
  };
}
