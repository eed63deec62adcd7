// The job store's ports: uploads, job records, progress and the read model the API serves, and
// the records they hold. Consumers ask for the roles they use; an adapter implements them all.
import type { Job } from '../../shared/api/job.js';
import type { JobProgress } from '../../shared/api/progress.js';
import type { FileType } from '../../shared/api/upload.js';
import type { JobStatus } from '../../shared/job-status.js';
import type { ValidateBody } from '../../shared/api/job.js';
import type { SourceFormat } from '../domain/blob-project.js';
import type { EstimateInternal } from '../domain/estimate-state.js';
import type { JobMemory } from '../domain/job-memory.js';
import type { RequestedConfig } from '../../shared/api/render-config.js';
import type { PreviewHold } from '../domain/preview-gate.js';
import type { JobScheduling, PreviewGate } from '../../shared/api/scheduling.js';

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
  /** Object key of the uploaded source (.blend or .zip, or the blob project document). */
  sourceKey: string;
  fileType: FileType;
  /** `blobs`: sourceKey is a BlobProject (service/domain/blob-project.ts) to assemble from blobs. Absent: `object`. */
  sourceFormat?: SourceFormat;
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
    /**
     * Frames copied from the job this one was requeued from, or kept by its estimate (frame ranges),
     * not rendered; counted as done.
     */
    copiedFrames?: string[];
  };
  /** A failed or canceled job that kept finished frames for a requeue (kept-frames.ts): when retention deletes them. */
  keptUntil?: string;
  /** Set on a job made by POST /jobs/{id}/requeue (job-requeue extension, service/domain/requeue.ts). */
  requeue?: {
    fromJobId: string;
    /**
     * The old job's request, rendered once validation passes; null: it never asked for a render, so
     * this job waits in `validated`.
     */
    requestedConfig: RequestedConfig | null;
    /** Frame ranges to render again even where the old job has them; null: only the frames it lacks render. */
    rerender: string[] | null;
  };
  /** What the job's frames need in memory, as measured (service/domain/job-memory.ts); absent: nothing yet. */
  memory?: JobMemory;
  /** Chunks waiting for the previews' approval (extension scheduling, service/domain/preview-gate.ts). */
  previewHold?: PreviewHold;
  /** The job's estimate (extension estimate), from POST /jobs/{id}/estimate on; the job stays `validated`. */
  estimate?: EstimateInternal;
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
  /** `blobs`: a committed blob project (objectKey is its BlobProject document). Absent: `object`. */
  sourceFormat?: SourceFormat;
}

export interface ListOptions {
  page: number;
  pageSize: number;
  status?: JobStatus;
}

/**
 * The fields of a job's scheduling written one by one (JobRecords.setSchedulingFields, and the
 * render's move: POST /jobs/{id}/render sets what its request chose, never `paused`).
 */
export type SchedulingFields = Partial<JobScheduling>;

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
  /**
   * For workers, which act across workspaces. `via`: the job the worker holds a task of, when it
   * reads a job that one was requeued from (a remote worker's token opens only its own jobs).
   */
  getById(id: string, opts?: { via?: string }): Promise<JobRecord | undefined>;
  /**
   * Compare-and-set: moves the job to `to` only if its status is one of `from`, applying the
   * patches in the same write. Returns the updated record, or undefined when the status did not match.
   * `scheduling` (default none): fields of the job's scheduling set in the same write over the
   * scheduling as it is then, as setSchedulingFields does (the render's move: a priority or pause
   * written since the route read the job stays). The service's own store only: the worker API's
   * transition does not carry it.
   */
  transition(
    id: string,
    from: readonly JobStatus[],
    to: JobStatus,
    patch?: JobPatch,
    internal?: Partial<JobInternal>,
    scheduling?: SchedulingFields,
  ): Promise<JobRecord | undefined>;
  /** Updates fields without a status change (outputs, analysis, normalizedSeconds, ...). */
  update(id: string, patch: JobPatch, internal?: Partial<JobInternal>): Promise<JobRecord | undefined>;
  /**
   * Compare-and-set on the approval gate of the job's preview frames (extension scheduling): moves
   * `scheduling.previews.gate` to `to.gate` (and its frames to `to.frames` when given), keeping the
   * rest of the job's scheduling as it is at the write, with `internal` in the same write, only if
   * the gate is one of `from` (`none` when the job has no previews yet). Returns the updated record,
   * or undefined when the gate did not match or the job has no scheduling.
   */
  setPreviewGate(
    id: string,
    from: readonly PreviewGate[],
    to: { gate: PreviewGate; frames?: number[] },
    internal?: Partial<JobInternal>,
  ): Promise<JobRecord | undefined>;
  /**
   * Field-level write of the job's scheduling (extension scheduling): sets only the given fields,
   * over the scheduling as it is at the write (the defaults when the job has none yet), so writers
   * of other fields (priority, pause, the planner's `waitingFor` and preview gate) never undo each
   * other from an earlier read. Returns the updated record, or undefined when the job is missing.
   */
  setSchedulingFields(id: string, fields: SchedulingFields): Promise<JobRecord | undefined>;
  /**
   * Jobs whose outputs are due for deletion at `now` (scheduledForDeletionAt passed, not yet deleted), oldest first.
   */
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
export type WorkerJobStore = Pick<JobRecords, 'getById' | 'transition' | 'update'> &
  Pick<ProgressStore, 'setProgress'> &
  // Absent only from views of the store that never plan a render (the estimate's): planning needs it.
  Partial<Pick<JobRecords, 'setPreviewGate' | 'setSchedulingFields'>>;
