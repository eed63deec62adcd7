// The bridge daemon's local HTTP API (127.0.0.1 only, every request with the daemon's token):
// what the Blender add-on, the tray app and `renderbridge` talk to. Schemas for bodies, answers
// and Server-Sent Events live here once; the daemon validates with them, clients parse with them.
import { z } from 'zod';
import { ErrorBody } from '../api/error-body.js';
import { Estimate } from '../api/estimate.js';
import { FrameRange, RequestedRenderConfig } from '../api/render-config.js';
import { Job, ValidationConfig } from '../api/job.js';
import { JobProgress } from '../api/progress.js';
import { UploadPreflight } from '../api/upload.js';
import { AddonToBundle, CollectedDependency } from '../pack/dependencies.js';
import { MissingFile, PathRemap } from '../pack/manifest.js';

/** Default port of the daemon on 127.0.0.1 (override with --port or RENDERBRIDGE_DAEMON_PORT). */
export const DAEMON_DEFAULT_PORT = 47_615;
/** File the daemon writes in the per-user state folder (mode 0600). */
export const DAEMON_STATE_FILE = 'daemon.json';
/** Path of the webhook receiver: the only route that takes a signature instead of the token. */
export const DAEMON_WEBHOOK_PATH = '/webhooks/render-complete';

/** What the daemon writes to its state file so local clients can find and call it. */
export const DaemonState = z.object({
  version: z.literal(1),
  pid: z.int(),
  port: z.int().min(1).max(65_535),
  /** Random access token (256 bits, base64url); every request carries it as `Authorization: Bearer`. */
  token: z.string().min(32),
  startedAt: z.string(),
  daemonVersion: z.string(),
});
export type DaemonState = z.infer<typeof DaemonState>;

export const Health = z.object({
  status: z.literal('ok'),
  version: z.string(),
  /** True when an API key was found (keychain or RENDERBRIDGE_API_KEY); the key itself is never returned. */
  apiKeyConfigured: z.boolean(),
  apiKeySource: z.enum(['keychain', 'env']).nullable(),
  /** The service API root in use now (it follows edits of config.toml). */
  serviceUrl: z.string(),
  /** The profile of config.toml in use (its keychain entry holds the key). */
  profile: z.string(),
  hotFolder: z.string().nullable(),
  pid: z.int(),
  startedAt: z.string(),
});
export type Health = z.infer<typeof Health>;

export const DaemonWarning = z.object({ code: z.string(), message: z.string() });
export type DaemonWarning = z.infer<typeof DaemonWarning>;

/** A byte transfer in progress (packing, uploading): what the add-on panel, the tray and the CLI show. */
export const Transfer = z.object({
  bytesDone: z.int().min(0),
  bytesTotal: z.int().min(0),
  /** Smoothed over the last seconds; 0 before the first measurement. */
  bytesPerSecond: z.number().min(0),
  /** Seconds left at that rate; null while unknown. */
  etaSeconds: z.number().min(0).nullable(),
});
export type Transfer = z.infer<typeof Transfer>;

/**
 * What to pack: a .blend (with the dependencies the add-on collected, or traced by headless
 * Blender), a folder, or a ready .zip.
 */
export const PackRequest = z.strictObject({
  /** Absolute path of a .blend, a project folder or a .zip. */
  path: z.string().min(1).max(4096),
  /** The add-on's collected dependencies; when absent for a .blend the daemon traces them with Blender. */
  dependencies: z.array(CollectedDependency).max(200_000).optional(),
  addons: z.array(AddonToBundle).max(200).optional(),
});
export type PackRequest = z.infer<typeof PackRequest>;

/** One file of a pack as the content-addressed upload sends it (a blob per distinct sha256). */
export const PackedFile = z.object({
  /** Where the file goes in the project (archive path). */
  path: z.string(),
  /** The file on this machine to read the bytes from (the generated manifest lives in the daemon's work folder). */
  source: z.string(),
  sha256: z.string(),
  size: z.int().min(0),
  /** `gzip` when the bytes compress (a .blend), `none` for already compressed data. */
  compression: z.enum(['none', 'gzip']),
});
export type PackedFile = z.infer<typeof PackedFile>;

export const PackResult = z.object({
  packId: z.string(),
  /** What was packed: the .blend, folder or .zip the request named (absolute). */
  sourcePath: z.string(),
  /**
   * The finished zip on this machine; null for a pack not zipped (yet): the content-addressed
   * upload sends `files` instead, and the packer zips on demand for a service without it.
   */
  zipPath: z.string().nullable(),
  /** Every file of the project with its hash, the manifest included; empty for a user's own .zip (sent as is). */
  files: z.array(PackedFile).default([]),
  bytes: z.int(),
  fileCount: z.int(),
  /** Archive path of the scene to render. */
  sceneFile: z.string(),
  preflight: UploadPreflight,
  missing: z.array(MissingFile),
  remaps: z.array(PathRemap),
  warnings: z.array(DaemonWarning),
});
export type PackResult = z.infer<typeof PackResult>;

/** A pack made in the background (POST /packs): poll GET /packs/:id or follow the `pack` event. */
export const PackState = z.object({
  packId: z.string(),
  state: z.enum(['packing', 'ready', 'failed']),
  /** What the packer does now: tracing dependencies with Blender, hashing files, or writing a zip. */
  phase: z.enum(['tracing', 'hashing', 'zipping']).nullable(),
  progress: Transfer,
  result: PackResult.nullable(),
  error: ErrorBody.nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type PackState = z.infer<typeof PackState>;

/** Render choices of a submission; `renderConfig` passes any other field of the service's render body. */
export const SubmitSettings = z.strictObject({
  frames: z.array(FrameRange).min(1).max(100).optional(),
  camera: z.string().min(1).max(1024).optional(),
  viewLayer: z.string().min(1).max(1024).optional(),
  /** Output format, e.g. PNG, OPEN_EXR, JPEG (the service's `outputFormat`). */
  format: z.string().min(1).max(64).optional(),
  video: z.boolean().optional(),
  renderConfig: RequestedRenderConfig.partial().optional(),
  validationConfig: ValidationConfig.optional(),
});
export type SubmitSettings = z.infer<typeof SubmitSettings>;

export const SubmitRequest = z
  .strictObject({
    /** A pack made by POST /pack (its preflight already shown), or a path to pack now. */
    packId: z.string().optional(),
    pack: PackRequest.optional(),
    /**
     * A job already uploaded and `validated` (e.g. by an `estimate` submission): rendered or
     * estimated without a new upload.
     */
    jobId: z.string().min(1).max(200).optional(),
    settings: SubmitSettings.default({}),
    /** Folder the outputs go to; default: a folder per job under the downloads folder. */
    outDir: z.string().min(1).max(4096).optional(),
    /** Download the outputs when the job completes (default true). */
    download: z.boolean().default(true),
    /**
     * `check` uploads and validates only (the add-on's "Check"): the submission is `done` once the job is validated;
     * read its analysis warnings with GET /jobs/:id. `estimate` goes on to the service's estimate (extension
     * estimate) of the render these settings ask for, and is `done` once it is ready, the job still `validated`:
     * submit `{jobId, settings}` with the same settings to render it, the sampled frames kept. Default `render`.
     */
    mode: z.enum(['render', 'check', 'estimate']).optional(),
  })
  .refine(
    (b) => [b.packId, b.pack, b.jobId].filter((v) => v !== undefined).length === 1,
    'give exactly one of packId, pack and jobId',
  );
export type SubmitRequest = z.infer<typeof SubmitRequest>;

/**
 * How a submission's project travels: blobs the service lacks (extension content-addressed-uploads), or
 * the spec's single PUT of a zip.
 */
export const UploadMode = z.enum(['blobs', 'single-put']);
export type UploadMode = z.infer<typeof UploadMode>;

export const SubmissionStep = z.enum([
  'packing',
  'uploading',
  'creating',
  'validating',
  'estimating',
  'rendering',
  'done',
  'failed',
]);
export type SubmissionStep = z.infer<typeof SubmissionStep>;

export const Submission = z.object({
  id: z.string(),
  path: z.string(),
  step: SubmissionStep,
  jobId: z.string().nullable(),
  uploadedBytes: z.int(),
  totalBytes: z.int(),
  /** Reading and hashing (or zipping) the project; null before packing starts. */
  pack: Transfer.nullable().default(null),
  /** Bytes to send; with `blobs`, `bytesTotal` counts only blobs the service lacked. Null before the upload starts. */
  upload: Transfer.extend({
    mode: UploadMode,
    /** Bytes of the project the service already held (not sent). */
    bytesSkipped: z.int().min(0),
    /** Times a part or the single PUT was sent again after a network error. */
    retries: z.int().min(0),
  })
    .nullable()
    .default(null),
  preflight: UploadPreflight.nullable(),
  warnings: z.array(DaemonWarning),
  /** The service's (or the daemon's) error body when step is `failed`. */
  error: ErrorBody.nullable(),
  /** The service's estimate (mode `estimate`), refined while it samples; null (or absent) before it starts. */
  estimate: Estimate.nullable().optional(),
  outDir: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Submission = z.infer<typeof Submission>;

export const DownloadState = z.object({
  jobId: z.string(),
  outDir: z.string(),
  state: z.enum(['pending', 'downloading', 'done', 'failed']),
  files: z.int(),
  filesDone: z.int(),
  bytes: z.int(),
  bytesDone: z.int(),
  /** Files left alone because a complete copy was already there. */
  skipped: z.int(),
  /** Output names from the service that were not written because they would leave the folder. */
  refused: z.array(z.object({ name: z.string(), reason: z.string() })).default([]),
  error: ErrorBody.nullable(),
});
export type DownloadState = z.infer<typeof DownloadState>;

/** A job of the key's workspace as the daemon tracks it. */
export const TrackedJob = z.object({
  job: Job,
  progress: JobProgress.nullable(),
  download: DownloadState.nullable(),
});
export type TrackedJob = z.infer<typeof TrackedJob>;

export const DownloadRequest = z.strictObject({ outDir: z.string().min(1).max(4096).optional() });

export const RenderComplete = z.object({
  jobId: z.string(),
  status: z.enum(['completed', 'failed', 'canceled']),
  job: Job,
  /** Where the outputs are (or will be) downloaded; null when not downloading. */
  outDir: z.string().nullable(),
});
export type RenderComplete = z.infer<typeof RenderComplete>;

/**
 * A frame thumbnail as the daemon hands it to the job window: the image comes from the daemon, which holds the API key.
 */
export const DaemonThumbnail = z.object({
  frame: z.int().min(0),
  /** The daemon's own path of the image (GET, with the daemon's token). */
  url: z.string(),
});
export type DaemonThumbnail = z.infer<typeof DaemonThumbnail>;

/**
 * A job's frame thumbnails (the service's extension frame-thumbnails), the first DAEMON_MAX_THUMBNAILS in frame order.
 */
export const DaemonThumbnails = z.object({
  jobId: z.string(),
  /** The shot's frame rate; null until the render is planned. */
  fps: z.number().gt(0).nullable(),
  /** The frame that finished last; null when none has a thumbnail. */
  latest: DaemonThumbnail.nullable(),
  thumbnails: z.array(DaemonThumbnail),
  /** Thumbnails the job has, also those past the ones listed. */
  total: z.int().min(0),
});
export type DaemonThumbnails = z.infer<typeof DaemonThumbnails>;

/** Thumbnails one answer of GET /jobs/:id/thumbnails lists at most. */
export const DAEMON_MAX_THUMBNAILS = 2000;

/** Query of GET /jobs/:id/thumbnails/image: the frame, or none for the one that finished last. */
export const DaemonThumbnailQuery = z.strictObject({ frame: z.coerce.number().int().min(0).max(1_048_574).optional() });

/** Server-Sent Events of `GET /events`: the SSE `event:` name and the JSON `data:` of each. */
export const DAEMON_EVENTS = {
  job: TrackedJob,
  progress: JobProgress,
  submission: Submission,
  pack: PackState,
  download: DownloadState,
  renderComplete: RenderComplete,
} as const;
export type DaemonEventName = keyof typeof DAEMON_EVENTS;
export type DaemonEvent = {
  [K in DaemonEventName]: { event: K; data: z.infer<(typeof DAEMON_EVENTS)[K]> };
}[DaemonEventName];

/** Every endpoint: success status, method, path (fastify style), body and answer schemas. */
export const DAEMON_ROUTES = {
  health: { status: 200, method: 'GET', path: '/health', response: Health },
  /** Packs while the request waits (kept for scripts); the add-on and tray use startPack. */
  pack: { status: 200, method: 'POST', path: '/pack', body: PackRequest, response: PackResult },
  startPack: { status: 202, method: 'POST', path: '/packs', body: PackRequest, response: PackState },
  getPack: { status: 200, method: 'GET', path: '/packs/:id', response: PackState },
  submit: { status: 202, method: 'POST', path: '/submissions', body: SubmitRequest, response: Submission },
  listSubmissions: {
    status: 200,
    method: 'GET',
    path: '/submissions',
    response: z.object({ submissions: z.array(Submission) }),
  },
  getSubmission: { status: 200, method: 'GET', path: '/submissions/:id', response: Submission },
  listJobs: { status: 200, method: 'GET', path: '/jobs', response: z.object({ jobs: z.array(TrackedJob) }) },
  getJob: { status: 200, method: 'GET', path: '/jobs/:id', response: TrackedJob },
  cancelJob: { status: 200, method: 'POST', path: '/jobs/:id/cancel', response: TrackedJob },
  downloadJob: {
    status: 202,
    method: 'POST',
    path: '/jobs/:id/download',
    body: DownloadRequest,
    response: DownloadState,
  },
  listJobThumbnails: { status: 200, method: 'GET', path: '/jobs/:id/thumbnails', response: DaemonThumbnails },
  /** The image's bytes (JPEG or PNG), fetched from the service with the daemon's API key. */
  getJobThumbnail: {
    status: 200,
    method: 'GET',
    path: '/jobs/:id/thumbnails/image',
    response: z.string().meta({ format: 'binary' }),
  },
  /**
   * The job's estimate as the service has it (extension estimate); start one with POST /submissions, mode `estimate`.
   */
  getJobEstimate: { status: 200, method: 'GET', path: '/jobs/:id/estimate', response: Estimate },
  /**
   * Cancels the job's estimate while it samples (the job stays `validated`); the submission
   * following it fails ESTIMATE_CANCELED.
   */
  cancelJobEstimate: { status: 200, method: 'DELETE', path: '/jobs/:id/estimate', response: Estimate },
  events: { status: 200, method: 'GET', path: '/events', response: z.never() },
} as const;
export type DaemonRouteName = keyof typeof DAEMON_ROUTES;
