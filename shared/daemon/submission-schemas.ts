// The daemon API's schemas of packs and submissions: what POST /pack(s) and POST /submissions take,
// and the pack and submission states they answer and the `pack` and `submission` events carry.
// The routes and events that use them: api.ts.
import { z } from 'zod';
import { ErrorBody } from '../api/error-body.js';
import { Estimate } from '../api/estimate.js';
import { FrameRange, RequestedRenderConfig } from '../api/render-config.js';
import { SchedulingRequest } from '../api/scheduling.js';
import { ValidationConfig } from '../api/job.js';
import { UploadPreflight } from '../api/upload.js';
import { AddonToBundle, CollectedDependency } from '../pack/dependencies.js';
import { MissingFile, PathRemap } from '../pack/manifest.js';

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
  /**
   * The render's `scheduling` (extension scheduling: priority, preview frames, approval gate, jobs to
   * wait for). Default none: the service's defaults. Dropped, with a warning, where the service lacks it.
   */
  scheduling: SchedulingRequest.optional(),
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
