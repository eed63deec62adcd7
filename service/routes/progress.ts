import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ACTIVE_STATUSES } from '../../shared/job-status.js';
import { ROUTES } from '../../shared/routes.js';
import { requireAuth } from '../http/auth.js';
import { buildDownloads } from '../domain/downloads.js';
import { emptyProgress } from '../domain/progress.js';
import type { ServiceContext } from '../context.js';
import { loadJob } from './jobs.js';

export const progressRoutes: FastifyPluginAsyncZod<ServiceContext> = async (app, ctx) => {
  const one = ROUTES.getJobProgress;
  app.get(one.path, { schema: { params: one.params } }, async (req) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    const p = await ctx.jobs.getProgress(rec.job.id);
    // The job's status is authoritative; stored counters may predate the last transition.
    return { data: p ? { ...p, status: rec.job.status } : emptyProgress(rec.job.id, rec.job.status) };
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
