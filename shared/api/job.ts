import { z } from 'zod';
import { DateTime, Pagination, Url, Uuid } from './common.js';
import { FailedReasonType } from './enums.js';
import { Analysis, FinalConfig } from './analysis.js';
import { RequestedConfig } from './render-config.js';
import { UploadPreflight } from './upload.js';
import { JOB_STATUSES } from '../job-status.js';
import { JobScheduling } from './scheduling.js';
import { PlacementNotice } from './placement.js';
import { PreemptionNotice } from './preemption.js';

export const JobStatus = z.enum(JOB_STATUSES).meta({ id: 'JobStatus' });

export const FailedReason = z
  .object({
    name: z.string(),
    type: FailedReasonType,
    /** Free-form; the service puts `message`, and where known `frame`, `lastLines`, `warnings`, `choices`. */
    errorDetails: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'FailedReason' });
export type FailedReason = z.infer<typeof FailedReason>;

export const SceneFile = z
  .object({
    id: z.string(),
    name: z.string(),
    parentId: z.string().nullable(),
    rootFolderId: z.string(),
    isSceneFile: z.boolean(),
    isDeleted: z.boolean(),
    isFolder: z.boolean(),
    /** Bytes, as a decimal string (sizes can pass 2^53 in other services). */
    size: z.string(),
    createdAt: DateTime,
    updatedAt: DateTime,
    scheduledForDeletionAt: DateTime.nullable(),
  })
  .partial()
  .meta({ id: 'SceneFile' });

export const JobOutputState = z.object({
  isDeletedForClient: z.boolean(),
  scheduledForDeletionAt: DateTime.nullable(),
});

export const Job = z
  .object({
    id: Uuid,
    status: JobStatus,
    userId: Uuid,
    workspaceId: Uuid,
    createdAt: DateTime,
    updatedAt: DateTime,
    analysisId: Uuid.nullable().optional(),
    rootFolderId: Uuid.nullable().optional(),
    normalizedSeconds: z.number().optional(),
    previewUrl: Url.nullable().optional(),
    failedReason: FailedReason.nullable().optional(),
    requestedConfig: RequestedConfig.optional(),
    finalConfig: FinalConfig.nullable().optional(),
    output: JobOutputState.optional(),
    isAnalysisSkipped: z.boolean().optional(),
    projectId: Uuid.nullable().optional(),
    uploadPreflight: UploadPreflight.nullable().optional(),
    analysis: Analysis.nullable().optional(),
    sceneFile: SceneFile.optional(),
    /** Extension scheduling: priority, pause, dependencies and preview frames; absent before render. */
    scheduling: JobScheduling.optional(),
    /**
     * Extension scheduling: why no live worker can take the job's frames now (a required tag, memory);
     * null or absent when nothing is known against it. Cleared as soon as a worker takes a frame.
     */
    placement: PlacementNotice.nullable().optional(),
    /**
     * Extension scheduling: the job's tasks a higher-priority job paused at a frame boundary
     * (preemption), while they wait to run again; null or absent when none waits.
     */
    preemption: PreemptionNotice.nullable().optional(),
  })
  .meta({ id: 'Job' });
export type Job = z.infer<typeof Job>;

/** Start-render response: a job that may carry extra keys (spec). */
export const StartRenderResponse = Job.loose().meta({ id: 'StartRenderResponse' });

export const JobEnvelope = z.object({ data: Job }).meta({ id: 'JobEnvelope' });

export const JobList = z.object({ jobs: z.array(Job), pagination: Pagination }).meta({ id: 'JobList' });
export type JobList = z.infer<typeof JobList>;

/** Query strings arrive as text: coerce, then apply the spec's bounds. */
export const ListJobsQuery = z.strictObject({
  page: z.coerce.number().int().min(1).default(1),
  pageSize: z.coerce.number().int().min(1).max(100).default(20),
  status: JobStatus.optional(),
});
export type ListJobsQuery = z.input<typeof ListJobsQuery>;

export const CreateJobBody = z
  .strictObject({
    slug: z.string().min(1).max(200),
    /** Client-side ZIP inspection made before upload (spec `uploadPreflight`), stored on the job. */
    uploadPreflight: UploadPreflight.optional(),
  })
  .meta({ id: 'CreateJobBody' });
export type CreateJobBody = z.infer<typeof CreateJobBody>;

export const ValidationConfig = z.strictObject({
  /** The scene file to render, as a path inside the uploaded archive. */
  pathToFileForRender: z.string().min(1).max(4096).optional(),
  /** Scene name; default: the file's active scene. */
  sceneToRender: z.string().min(1).max(1024).optional(),
  /** Bundled add-ons to enable, by module id (as listed in the archive's manifest). */
  addonsToUse: z
    .array(z.object({ id: z.string().min(1), name: z.string() }))
    .max(200)
    .optional(),
  /** Paths inside the archive of bundled add-ons to install before validation and render. */
  bundledAddonPathsToUse: z.array(z.string().min(1).max(4096)).max(200).optional(),
});

export const ValidateBody = z
  .strictObject({ validationConfig: ValidationConfig.optional() })
  .meta({ id: 'ValidateBody' });
export type ValidateBody = z.infer<typeof ValidateBody>;

export const JobIdParams = z.strictObject({ id: Uuid });
