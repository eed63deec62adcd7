// The scheduling extension's routes: a job's priority, pause and resume, and "go" after its
// preview frames. Each writes the job's `scheduling` (what GET /jobs/{id} shows, and what every
// later enqueue of the job's tasks reads) and then tells the queue, which holds or reorders the
// tasks already waiting; a repeat of any of them changes nothing.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ROUTES } from '../../shared/routes.js';
import { isTerminal } from '../../shared/job-status.js';
import type { JobScheduling } from '../../shared/api/scheduling.js';
import { ApiError } from '../http/api-error.js';
import { requireAuth } from '../http/auth.js';
import { presentJob } from '../domain/jobs.js';
import { approvePreviews } from '../domain/preview-gate.js';
import { initialScheduling } from '../domain/scheduling.js';
import type { JobRecord } from '../ports/jobs.js';
import type { ServiceContext } from '../context.js';
import { loadJob } from './jobs.js';

export const schedulingRoutes: FastifyPluginAsyncZod<ServiceContext> = async (app, ctx) => {
  const ttl = ctx.config.downloadUrlTtlSeconds;
  const answer = async (rec: JobRecord) => ({ data: await presentJob(rec, ctx.storage, ttl) });

  /** The job, unless it has finished (409 JOB_ALREADY_FINISHED). */
  const unfinished = async (workspaceId: string, id: string) => {
    const rec = await loadJob(ctx, workspaceId, id);
    if (isTerminal(rec.job.status)) {
      throw new ApiError('JOB_ALREADY_FINISHED', { metadata: { jobId: id, status: rec.job.status } });
    }
    return rec;
  };
  /** Writes `change` over the job's scheduling (the defaults before its render). */
  const write = async (rec: JobRecord, change: Partial<JobScheduling>) => {
    const scheduling = { ...(rec.job.scheduling ?? initialScheduling(undefined, [])), ...change };
    return (await ctx.jobs.update(rec.job.id, { scheduling })) ?? rec;
  };

  const priority = ROUTES.setJobPriority;
  app.post(priority.path, { schema: { params: priority.params, body: priority.body } }, async (req) => {
    const rec = await unfinished(requireAuth(req).workspaceId, req.params.id);
    // The job first: a task enqueued between the two reads the new priority from it.
    const updated = await write(rec, { priority: req.body.priority });
    await ctx.queue.setJobPriority(rec.job.id, req.body.priority);
    return answer(updated);
  });

  const pause = ROUTES.pauseJob;
  app.post(pause.path, { schema: { params: pause.params } }, async (req) => {
    const rec = await unfinished(requireAuth(req).workspaceId, req.params.id);
    const updated = rec.job.scheduling?.paused ? rec : await write(rec, { paused: true });
    await ctx.queue.pauseJob(rec.job.id);
    return answer(updated);
  });

  const resume = ROUTES.resumeJob;
  app.post(resume.path, { schema: { params: resume.params } }, async (req) => {
    const rec = await unfinished(requireAuth(req).workspaceId, req.params.id);
    const updated = rec.job.scheduling?.paused ? await write(rec, { paused: false }) : rec;
    await ctx.queue.resumeJob(rec.job.id);
    ctx.events?.enqueued();
    return answer(updated);
  });

  const approve = ROUTES.approvePreviews;
  app.post(approve.path, { schema: { params: approve.params } }, async (req) => {
    const rec = await unfinished(requireAuth(req).workspaceId, req.params.id);
    // The gate's own compare-and-set, never a write of the whole scheduling: planning may be
    // writing the job's previews at this moment (domain/preview-gate.ts).
    const approved = await approvePreviews(ctx, rec.job.id);
    if (!approved) throw new ApiError('PREVIEW_APPROVAL_NOT_PENDING', { metadata: { jobId: rec.job.id } });
    if (approved.enqueued) ctx.events?.enqueued();
    return answer(approved.rec);
  });
};
