// Bodies of the job-requeue extension: POST /jobs/{id}/requeue and GET /jobs/{id}/lineage.
import { z } from 'zod';
import { DateTime, Uuid } from './common.js';
import { FrameRange } from './render-config.js';

const RANGE = String.raw`\d{1,7}(-\d{1,7}(x\d{1,7})?)?`;

/** `"1-10,15"`: the spec's frame ranges joined by commas (spaces allowed after a comma). */
export const FrameList = z
  .string()
  .max(4000)
  .regex(new RegExp(`^${RANGE}(, ?${RANGE}){0,99}$`), 'use frame ranges joined by commas, e.g. "1-10,15" or "1-20x2"');

/**
 * POST /jobs/{id}/requeue. `frames`: the frames to render again, as the spec's frame ranges (an
 * array like requestedRenderConfig.frameRanges, or one comma-separated string); every other
 * frame the old job finished is copied. Required for a completed job; absent for a failed or
 * canceled one: every frame it did not finish renders.
 */
export const RequeueBody = z
  .strictObject({
    frames: z.union([z.array(FrameRange).min(1).max(100), FrameList]).optional(),
  })
  .meta({ id: 'RequeueBody' });
export type RequeueBody = z.infer<typeof RequeueBody>;

/** One requeue: the new job and the frames it was asked to render again (null: all it lacked). */
export const RequeueLink = z
  .object({
    jobId: Uuid,
    /** The job this one was requeued from (for `requeuedFrom`) or the new job (for `requeues`). */
    frames: z.array(z.string()).nullable(),
    createdAt: DateTime,
  })
  .meta({ id: 'RequeueLink' });
export type RequeueLink = z.infer<typeof RequeueLink>;

/** GET /jobs/{id}/lineage: where the job came from and what was requeued from it, oldest first. */
export const JobLineage = z
  .object({
    data: z.object({
      jobId: Uuid,
      /** The job this one is a requeue of (its id, the frames asked again, when); null for an uploaded job. */
      requeuedFrom: RequeueLink.nullable(),
      requeues: z.array(RequeueLink),
    }),
  })
  .meta({ id: 'JobLineage' });
export type JobLineage = z.infer<typeof JobLineage>;
