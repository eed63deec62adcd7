import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ACTIVE_STATUSES } from '../../shared/job-status.js';
import { ROUTES } from '../../shared/routes.js';
import { requireAuth } from '../http/auth.js';
import { buildDownloads } from '../domain/downloads.js';
import { emptyProgress } from '../domain/progress.js';
import { renderRows } from '../domain/frame-eta.js';
import type { ServiceContext } from '../context.js';
import type { FrameStatsReader } from '../ports/frame-stats.js';
import { ETA_FRAMES, jobFrames, progressEta } from './frame-stats.js';
import { estimateProfile } from '../domain/estimate-state.js';
import { loadJob } from './jobs.js';

/** `frameStats`: the frame-stats extension's rows, for the progress's `etaBand`. Default none: no `etaBand`. */
export const progressRoutes: FastifyPluginAsyncZod<ServiceContext & { frameStats?: FrameStatsReader }> = async (
  app,
  ctx,
) => {
  const one = ROUTES.getJobProgress;
  app.get(one.path, { schema: { params: one.params } }, async (req) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    const p = await ctx.jobs.getProgress(rec.job.id);
    // The job's status is authoritative; stored counters may predate the last transition.
    const data = p ? { ...p, status: rec.job.status } : emptyProgress(rec.job.id, rec.job.status);
    if (!ctx.frameStats) return { data };
    // Read only while frames render: a finished job's band is null without reading its rows.
    // The render's own frames: an estimate's sampled frames came before it, cold (renderRows).
    const rows =
      p && ['booting', 'rendering'].includes(rec.job.status)
        ? renderRows(await ctx.frameStats.frameTimes(rec.job.id, { latest: ETA_FRAMES }), rec.internal.estimate?.frames)
        : [];
    const frames = rows.length ? jobFrames(rec.job.finalConfig?.frameRanges) : [];
    const estimate = estimateProfile(rec.internal.estimate, rec.job.requestedConfig);
    return { data: { ...data, etaBand: progressEta(data, rows, Date.now(), frames, estimate) } };
  });

  const all = ROUTES.listProgress;
  app.get(all.path, async (req) => {
    const auth = requireAuth(req);
    return { data: await ctx.jobs.listProgress(auth.workspaceId, [...ACTIVE_STATUSES]) };
  });

  const dl = ROUTES.getDownloads;
  app.get(dl.path, { schema: { params: dl.params } }, async (req) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    return buildDownloads(rec, ctx.storage, ctx.config.downloadUrlTtlSeconds);
  });
};
