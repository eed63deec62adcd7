// GET /jobs/{id}/frames (extension frame-stats): each finished frame's statistics, paged by
// frame, with the summary of all of them and the live ETA. Another workspace's job is a 404, as
// everywhere.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ROUTES } from '../../shared/routes.js';
import type { EtaBand } from '../../shared/api/frame-stats.js';
import type { JobProgress } from '../../shared/api/progress.js';
import { activeSlots, etaBand, renderRows, summarizeFrames } from '../domain/frame-eta.js';
import { expandFrameRanges } from '../domain/frame-ranges.js';
import { lessCallSetup, profileEta, warmRows } from '../domain/frame-profile.js';
import { trendEta, type FrameSample } from '../domain/frame-trend.js';
import { requireAuth } from '../http/auth.js';
import type { ServiceContext } from '../context.js';
import type { FrameStatsReader, FrameTime } from '../ports/frame-stats.js';
import { estimateProfile } from '../domain/estimate-state.js';
import { loadJob } from './jobs.js';

export interface FrameStatsRouteDeps {
  ctx: ServiceContext;
  frames: FrameStatsReader;
  /** The clock slots count as active by. Default Date.now. */
  now?: () => number;
}

/** Frames the ETA rests on at most: the latest to finish, which say most about the frames next on the timeline. */
export const ETA_FRAMES = 500;

/** Statuses in which frames still render, so an ETA means something. */
const RENDERING = new Set(['booting', 'rendering']);

/**
 * The ETA with its band for a job's progress, from its frame rows: frames left are the
 * progress's own (copied frames of a requeue count as done; frames in flight by their samples
 * still to render), divided among the slots that finished a frame lately. With the job's frame
 * list, frame times that change along the timeline are followed (frame-trend.ts): the frames left
 * are taken to be the last ones (slots claim frames in order), the estimate's kept frames left out.
 * With the estimate's samples (`estimate.profile`, of the same request), their profile along the
 * timeline, scaled by what the render's own frames took, is the shape (frame-profile.ts): a line
 * fitted to the first quarter cannot see subdivision's 4^level growth or a heavy region ahead.
 * Null when the job is not rendering or no frame has finished.
 */
export function progressEta(
  progress: Pick<JobProgress, 'status' | 'framesTotal' | 'framesDone' | 'percent'>,
  rows: readonly FrameTime[],
  now: number,
  frames?: readonly number[],
  estimate?: { kept?: readonly number[]; profile?: readonly FrameSample[]; callSeconds?: number; steps?: number[] },
): EtaBand | null {
  const { framesTotal: total, framesDone: done, percent } = progress;
  if (!RENDERING.has(progress.status) || total === null || done === null || rows.length === 0) return null;
  // `percent` counts the samples of frames in flight too: what is left of them is not a whole frame each.
  const left = Math.max(0, percent !== null ? Math.min(total - done, total * (1 - percent / 100)) : total - done);
  const slots = activeSlots(rows, now);
  if (!frames?.length)
    return etaBand(
      rows.map((r) => r.renderSeconds),
      left,
      slots,
    );
  const kept = new Set(estimate?.kept ?? []);
  const own = kept.size ? frames.filter((f) => !kept.has(f)) : frames;
  const remaining = own.slice(Math.max(0, own.length - Math.ceil(left)));
  const seen = rows.map((r) => ({ frame: r.frame, seconds: r.renderSeconds }));
  if (estimate?.profile && estimate.profile.length >= 2) {
    const warm = warmRows(lessCallSetup(rows, frames, estimate.callSeconds)).map((r) => ({
      frame: r.frame,
      seconds: r.renderSeconds,
    }));
    return profileEta(estimate.profile, warm, remaining, left, slots, estimate.callSeconds, estimate.steps);
  }
  return trendEta(seen, remaining, left, slots);
}

/** The job's frames in order, or none when it has no plan yet (or ranges this service refuses). */
export function jobFrames(frameRanges: readonly string[] | undefined): number[] {
  try {
    return frameRanges?.length ? expandFrameRanges(frameRanges) : [];
  } catch {
    return [];
  }
}

export const frameStatsRoutes: FastifyPluginAsyncZod<FrameStatsRouteDeps> = async (
  app,
  { ctx, frames, now = Date.now },
) => {
  const route = ROUTES.listJobFrames;
  app.get(route.path, { schema: { params: route.params, querystring: route.query } }, async (req) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    const { page, pageSize } = req.query;
    const [list, rows, progress] = await Promise.all([
      frames.listFrames(rec.job.id, { offset: (page - 1) * pageSize, limit: pageSize }),
      frames.frameTimes(rec.job.id),
      ctx.jobs.getProgress(rec.job.id),
    ]);
    const own = renderRows(rows, rec.internal.estimate?.frames);
    const recent = own.length > ETA_FRAMES ? latest(own, ETA_FRAMES) : own;
    const eta = progress
      ? progressEta(
          { ...progress, status: rec.job.status },
          recent,
          now(),
          jobFrames(rec.job.finalConfig?.frameRanges),
          estimateProfile(rec.internal.estimate, rec.job.requestedConfig),
        )
      : null;
    return {
      data: {
        jobId: rec.job.id,
        summary: summarizeFrames(rows),
        eta,
        frames: list.frames.map(({ jobId: _job, ...f }) => f),
      },
      pagination: { page, pageSize, total: list.total, totalPages: Math.ceil(list.total / pageSize) },
    };
  });
};

/** The `n` rows that finished last. */
function latest(rows: readonly FrameTime[], n: number): FrameTime[] {
  return [...rows].sort((a, b) => b.finishedAt.localeCompare(a.finishedAt)).slice(0, n);
}
