// The worker API's frame statistics (extension frame-stats): a worker on another machine reports
// each finished frame here, and the service stores it, as it stores everything a remote worker
// writes. Only for jobs the token holds a task of (404 JOB_NOT_FOUND otherwise); every row names
// the path's job. A repeated report replaces its row (one per frame and attempt); `finishedAt` is
// the service's time of arrival.
//
//   POST /jobs/:id/frames  FrameReportBody -> 204
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { FrameStat } from '../../shared/api/frame-stats.js';
import { ApiError } from '../http/api-error.js';
import type { FrameStatsWriter } from '../ports/frame-stats.js';
import { workerOf } from './auth.js';
import { JobIdParams, WORKER_API_PREFIX } from './contract.js';
import type { WorkerScope } from './scope.js';

export const FRAME_REPORT_PATH = '/jobs/:id/frames';

/** Most rows one report carries (a worker sends one a frame; a batch stays small). */
const MAX_ROWS = 1000;
const text = z.string().min(1).max(1000);

export const FrameReportBody = z.strictObject({
  frames: z
    .array(
      z.strictObject({
        ...FrameStat.shape,
        jobId: z.uuid(),
        attempt: z.int().min(1).max(1000),
        renderSeconds: z.number().min(0).max(1e9),
        peakMemoryBytes: z
          .int()
          .min(0)
          .max(2 ** 53)
          .nullable(),
        device: text,
        slot: text,
        blenderVersion: text.nullable(),
      }),
    )
    .min(1)
    .max(MAX_ROWS),
});
export type FrameReportBody = z.infer<typeof FrameReportBody>;

/** The report's path for one job, prefix included. */
export function frameReportPath(jobId: string): string {
  return `${WORKER_API_PREFIX}${FRAME_REPORT_PATH.replace(':id', encodeURIComponent(jobId))}`;
}

export const workerFrameRoutes: FastifyPluginAsyncZod<{ frames: FrameStatsWriter; scope: WorkerScope }> = async (
  app,
  { frames, scope },
) => {
  app.post(FRAME_REPORT_PATH, { schema: { params: JobIdParams, body: FrameReportBody } }, async (req, reply) => {
    const wrong = req.body.frames.findIndex((f) => f.jobId !== req.params.id);
    if (wrong >= 0) {
      throw new ApiError('VALIDATION_ERROR', {
        details: [
          {
            code: 'job_id_mismatch',
            path: ['body', 'frames', String(wrong), 'jobId'],
            message: `jobId must be the job of the path (${req.params.id})`,
          },
        ],
      });
    }
    await scope.job(workerOf(req), req.params.id);
    // Stamped with the service's clock on arrival, as heartbeats are: the ETA counts a slot as
    // working by how recent its last frame is, which a worker's skewed clock would distort.
    const at = new Date().toISOString();
    await frames.recordFrames(req.body.frames.map((f) => ({ ...f, finishedAt: at })));
    return reply.code(204).send();
  });
};
