// The service's ports. Routes and the worker depend on these interfaces only; the embedded
// adapters (SQLite, filesystem, SQLite-backed queue) are the defaults, and other engines
// slot in by implementing the same interface and passing test/conformance.
import type { Readable } from 'node:stream';
import type { Job } from '../shared/api/job.js';
import type { JobProgress } from '../shared/api/progress.js';
import type { FileType } from '../shared/api/upload.js';
import type { JobStatus } from '../shared/job-status.js';
import type { ValidateBody } from '../shared/api/job.js';

/** One stored output of a finished job, as the worker publishes it. */
export interface OutputFile {
  key: string;
  fileName: string;
  relativePath?: string;
  view: string | null;
  outputType: 'frame' | 'composite';
  compositeNodeName?: string;
  size: number;
}

export interface VideoFile {
  format: string;
  label: string | null;
  key: string | null;
  fps: number | null;
  segment: { start: number; end: number } | null;
}

/** Service-only state of a job; never sent to clients as is. */
export interface JobInternal {
  /** Object key of the uploaded source (.blend or .zip). */
  sourceKey: string;
  fileType: FileType;
  validationConfig?: ValidateBody['validationConfig'];
  renderRequestedAt?: string;
  previewKey?: string | null;
  /** The render plan: which Blender build renders, and the chunk tasks the frames were split into. */
  render?: {
    /** The planning worker's binary; other machines use their own build of `blenderVersion`. */
    blender: string;
    /** `major.minor` of the build the render was planned with (absent on jobs planned before 0.2). */
    blenderVersion?: string;
    chunkTaskIds: string[];
    frames: number;
    slots: number;
  };
  outputs?: {
    frames: OutputFile[];
    composites: OutputFile[];
    framesZipKey: string | null;
    compositesZipKey: string | null;
    videos: VideoFile[];
  };
}

/** A job as stored: the API fields (URLs are signed when served) plus internal state. */
export interface JobRecord {
  job: Omit<Job, 'previewUrl'>;
  internal: JobInternal;
}

/**
 * A job as the API serves it, still as stored text: `json` is the client-facing job without
 * `previewUrl`, and `previewKey` the object to sign for it (null: none, or outputs deleted).
 * Read paths splice the signed URL in instead of parsing and re-serialising every job.
 */
export interface StoredJobJson {
  json: string;
  previewKey: string | null;
}

export interface UploadRecord {
  slug: string;
  workspaceId: string;
  userId: string;
  fileName: string;
  fileType: FileType;
  objectKey: string;
  expiresAt: string;
  createdAt: string;
  /** Set when the PUT finished (fs storage), or when job creation found the object (S3). */
  completedAt: string | null;
  size: number | null;
  sha256: string | null;
  jobId: string | null;
}

export interface ListOptions {
  page: number;
  pageSize: number;
  status?: JobStatus;
}

export type JobPatch = Partial<Omit<JobRecord['job'], 'id' | 'workspaceId' | 'userId' | 'createdAt' | 'status'>>;

export class UploadClaimError extends Error {
  constructor(readonly reason: 'UPLOAD_NOT_FOUND' | 'UPLOAD_ALREADY_USED') {
    super(reason);
  }
}

/** Uploads: the targets clients PUT to, and the one job each may become. */
export interface UploadStore {
  createUpload(u: UploadRecord): Promise<void>;
  getUpload(workspaceId: string, slug: string): Promise<UploadRecord | undefined>;
  completeUpload(slug: string, size: number, sha256: string | null): Promise<void>;
  /** Creates the job and marks the upload used in one step; throws UploadClaimError. */
  createJobFromUpload(slug: string, rec: JobRecord): Promise<void>;
}

/** Job records as the lifecycle reads and writes them (status writes go through service/domain/job-lifecycle.ts). */
export interface JobRecords {
  get(workspaceId: string, id: string): Promise<JobRecord | undefined>;
  /** For workers, which act across workspaces. */
  getById(id: string): Promise<JobRecord | undefined>;
  /**
   * Compare-and-set: moves the job to `to` only if its status is one of `from`, applying the
   * patches in the same write. Returns the updated record, or undefined when the status did not match.
   */
  transition(
    id: string,
    from: readonly JobStatus[],
    to: JobStatus,
    patch?: JobPatch,
    internal?: Partial<JobInternal>,
  ): Promise<JobRecord | undefined>;
  /** Updates fields without a status change (outputs, analysis, normalizedSeconds, ...). */
  update(id: string, patch: JobPatch, internal?: Partial<JobInternal>): Promise<JobRecord | undefined>;
  /** Jobs whose outputs are due for deletion at `now` (scheduledForDeletionAt passed, not yet deleted), oldest first. */
  listExpired(now: Date, limit: number): Promise<JobRecord[]>;
}

/** Live progress of running jobs. */
export interface ProgressStore {
  getProgress(id: string): Promise<JobProgress | undefined>;
  setProgress(p: JobProgress): Promise<void>;
  /** Progress of the workspace's jobs that are in one of `statuses`. */
  listProgress(workspaceId: string, statuses: readonly JobStatus[]): Promise<JobProgress[]>;
}

/** What the API serves: pages of jobs, as stored client-facing JSON where it can. */
export interface JobReadModel {
  /** Newest first, stable (creation order breaks ties). */
  list(workspaceId: string, opts: ListOptions): Promise<{ records: JobRecord[]; total: number }>;
  /** `get` for serving: the stored client-facing JSON (see StoredJobJson). */
  getJson(workspaceId: string, id: string): Promise<StoredJobJson | undefined>;
  /** `list` for serving: the same page as `list`, as stored client-facing JSON. */
  listJson(workspaceId: string, opts: ListOptions): Promise<{ items: StoredJobJson[]; total: number }>;
}

/** The whole job store, as an adapter implements it; consumers ask for the roles they use. */
export interface JobStore extends UploadStore, JobRecords, ProgressStore, JobReadModel {}

/**
 * What workers may do to jobs: read one, move it through the state machine, record results and
 * progress. Workers on other machines get this over the service's internal worker API, so only
 * the service writes job state.
 */
export type WorkerJobStore = Pick<JobRecords, 'getById' | 'transition' | 'update'> & Pick<ProgressStore, 'setProgress'>;

export interface StoredObject {
  size: number;
}

export interface ObjectStorage {
  /** A URL accepting one PUT of the object until `expiresAt`. */
  presignPut(key: string, opts: { expiresAt: Date; fileType: FileType }): Promise<string>;
  /** A URL serving the object (with Range) until `expiresAt`, named `fileName` when saved. */
  presignGet(key: string, opts: { expiresAt: Date; fileName: string }): Promise<string>;
  /** Streams into the object; it becomes visible only when complete. Throws ObjectTooLargeError past maxBytes. */
  put(key: string, body: Readable, opts?: { maxBytes?: number }): Promise<{ size: number; sha256: string }>;
  get(key: string): Promise<Readable>;
  stat(key: string): Promise<StoredObject | undefined>;
  delete(key: string): Promise<void>;
  deletePrefix(prefix: string): Promise<void>;
  /** Every object under `prefix` (a folder: `a/b/` or `a/b`), in key order. */
  list(prefix: string): Promise<{ key: string; size: number }[]>;
}

export class ObjectTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`object exceeds ${maxBytes} bytes`);
  }
}

export class ObjectExistsError extends Error {
  constructor(readonly key: string) {
    super(`object ${key} already exists`);
  }
}

/** Every kind of task, in the order a job needs them. */
export const TASK_KINDS = ['validate', 'render', 'render-chunk', 'finalize'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

export interface Task {
  id: string;
  jobId: string;
  kind: TaskKind;
  payload: Record<string, unknown>;
  attempts: number;
}

export type TaskState = 'queued' | 'running' | 'done' | 'failed' | 'canceled';

/** What a queue tells about one task of a job (for deciding when a job's chunks are all done). */
export interface TaskInfo {
  id: string;
  kind: TaskKind;
  state: TaskState;
  attempts: number;
  lastError: string | null;
}

/** What the API routes do to the queue: add a job's work, and drop it when the job is canceled. */
export interface TaskSubmitter {
  /**
   * Durable enqueue; a task whose id already exists is not added again (idempotent). A task with
   * `after` is claimable only once every task it names is done (a job's finalize after its chunks).
   */
  enqueue(task: { id: string; jobId: string; kind: TaskKind; payload?: Record<string, unknown>; after?: readonly string[] }): Promise<void>;
  /** Drops the job's tasks that are not finished (cancel). */
  cancelJob(jobId: string): Promise<number>;
}

/** What a worker does with the tasks it runs: claim one, keep its lease, report how it ended. */
export interface TaskLeases {
  /** Leases the oldest ready task of the given kinds; it returns to the queue if the lease runs out. */
  claim(workerId: string, kinds: readonly TaskKind[], leaseMs: number): Promise<Task | undefined>;
  extendLease(taskId: string, workerId: string, leaseMs: number): Promise<boolean>;
  complete(taskId: string, workerId: string): Promise<void>;
  /**
   * Hands a claimed task back untouched (the worker is stopping, or cannot run it): it is queued
   * again, claimable after `delayMs` (default 0), and the attempt does not count.
   */
  release(taskId: string, workerId: string, opts?: { delayMs?: number }): Promise<void>;
  /** Retryable failures go back to the queue after `retryAfterMs`; fatal ones end the task. */
  fail(taskId: string, workerId: string, outcome: { retryable: boolean; message: string; retryAfterMs?: number }): Promise<void>;
  /**
   * Calls `listener` soon after a task of `kind` may have become claimable in any process that
   * shares the queue (at least: enqueued, or handed back without delay), so idle claimers
   * need not wait for their next poll. Best effort: a signal may be lost or spurious, and
   * claimers still poll. Returns the unsubscribe. Absent where only polling exists (SQLite).
   */
  onReady?(listener: (kind: TaskKind) => void): () => void;
}

/** The per-job blocklist's memory: which worker slots failed which job's tasks. */
export interface FailureLedger {
  /**
   * Counts one failed task of `jobId` on `worker` (a machine's render slot, stable across restarts)
   * and returns that worker's count on the job: the per-job blocklist is built from these.
   */
  recordFailure(jobId: string, worker: string): Promise<number>;
  /** Failed tasks per worker on the job ({} when none); dropped with the job's tasks. */
  jobFailures(jobId: string): Promise<Record<string, number>>;
}

/** Looking after the queue: what is in it, and pruning what finished long ago. */
export interface QueueHousekeeping {
  /** Every task of a job, oldest first. */
  jobTasks(jobId: string): Promise<TaskInfo[]>;
  counts(): Promise<{ queued: number; running: number; done: number; failed: number }>;
  /**
   * Deletes up to `limit` tasks that finished (done, failed or canceled) before `before`, with
   * what the queue kept for them (dependencies; a job's failure counts once none of its tasks is
   * left), oldest first; returns how many. Keeps a long-running farm's queue from growing forever.
   */
  pruneFinished(before: Date, limit: number): Promise<number>;
}

/** The whole queue, as an adapter implements it; consumers ask for the roles they use. */
export interface TaskQueue extends TaskSubmitter, TaskLeases, FailureLedger, QueueHousekeeping {
  close(): Promise<void>;
}

/**
 * Named leases for scheduled work that must run once across service instances (webhook
 * retries, retention sweeps): only the holder of a live lease does the work.
 */
export interface LeaseStore {
  /** Takes `name` for `holder`, or renews it, until now + ttlMs; false while another holder's lease is live. */
  acquire(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up early (clean shutdown) so another instance takes over at once. */
  release(name: string, holder: string): Promise<void>;
}

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  workspaceName: string;
  userId: string;
  label: string;
  /** First characters of the key, for recognising it in listings; never enough to use it. */
  displayPrefix: string;
  createdAt: string;
  revokedAt: string | null;
}

/** Workspaces, their users and API keys. Keys are stored only as SHA-256 hashes. */
/** A key record as authentication reads it. */
export type FoundKey = ApiKeyRecord & { keyHash: Buffer };

export interface KeyStore {
  ensureWorkspace(name: string): Promise<{ id: string; name: string }>;
  createKey(rec: Omit<ApiKeyRecord, 'workspaceName' | 'revokedAt'>, keyHash: Buffer): Promise<void>;
  /**
   * The key with this SHA-256, revoked or not. An adapter that can answer from memory returns the
   * value itself rather than a promise, so authentication finishes without a trip through the
   * microtask queue (it runs on every request).
   */
  findByHash(keyHash: Buffer): FoundKey | undefined | Promise<FoundKey | undefined>;
  listKeys(workspaceName?: string): Promise<ApiKeyRecord[]>;
  /** Returns false when no such active key exists. */
  revokeKey(id: string): Promise<boolean>;
  ensureUser(workspaceId: string, name: string): Promise<string>;
}

/** What one request costs a key's budget (service/domain/rate-budget.ts does the arithmetic). */
export interface RateDecision {
  allowed: boolean;
  /** The bucket's size (the `max` requests of the budget). */
  limit: number;
  /** Whole requests left after this one. */
  remaining: number;
  /** How long until one more request is allowed; 0 when this one was. */
  retryAfterMs: number;
  /** How long until the bucket is full again. */
  resetMs: number;
}

/** The port: takes one request from a key's budget. */
export interface RateLimiter {
  /** Synchronous when answered from memory: it runs on every request. */
  take(key: string): RateDecision | Promise<RateDecision>;
  close?(): Promise<void> | void;
}
