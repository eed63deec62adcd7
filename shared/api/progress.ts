import { z } from 'zod';
import { DateTime, Uuid } from './common.js';
import { JobStatus } from './job.js';

/**
 * Frame counters of one job ("fields of the progress response: not shown"). Every counter is
 * null until the render has produced counters; `status` is repeated so a poller needs one call,
 * but counters never replace `GET /jobs/{id}`'s status as the workflow signal.
 */
export const JobProgress = z
  .object({
    jobId: Uuid,
    status: JobStatus,
    framesTotal: z.int().min(0).nullable(),
    framesDone: z.int().min(0).nullable(),
    framesRendering: z.int().min(0).nullable(),
    framesFailed: z.int().min(0).nullable(),
    currentFrame: z.int().nullable(),
    currentSample: z.int().min(0).nullable(),
    samplesTotal: z.int().min(0).nullable(),
    /** 0-100, from finished frames plus the sample progress of frames in flight. */
    percent: z.number().min(0).max(100).nullable(),
    etaSeconds: z.number().min(0).nullable(),
    updatedAt: DateTime.nullable(),
  })
  .meta({ id: 'JobProgress' });
export type JobProgress = z.infer<typeof JobProgress>;

export const JobProgressEnvelope = z.object({ data: JobProgress }).meta({ id: 'JobProgressEnvelope' });

/** `GET /jobs/progress`: counters of the workspace's running jobs; `[]` when none runs. */
export const ProgressList = z.object({ data: z.array(JobProgress) }).meta({ id: 'ProgressList' });
export type ProgressList = z.infer<typeof ProgressList>;
