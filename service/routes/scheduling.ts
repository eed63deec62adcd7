// The scheduling extension's routes: a job's priority, pause and resume, and "go" after its
// preview frames. Each writes only its own field of the job's `scheduling` (what GET /jobs/{id}
// shows) and then tells the queue, which holds or reorders the tasks already waiting and those
// enqueued later; a repeat of any of them changes nothing.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ROUTES } from '../../shared/routes.js';
import { isTerminal } from '../../shared/job-status.js';
import { ApiError } from '../http/api-error.js';
import { requireAuth } from '../http/auth.js';
import { presentJob } from '../domain/jobs.js';
import { approvePreviews } from '../domain/preview-gate.js';
import { changeScheduling, type SchedulingChange } from '../domain/scheduling-change.js';
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
  /** The change written and told to the queue (domain/scheduling-change.ts); 404 when the job went meanwhile. */
  const change = async (rec: JobRecord, c: SchedulingChange) => {
    const done = await changeScheduling({ jobs: ctx.jobs, queue: ctx.queue }, rec.job.id, c);
    if (!done) throw new ApiError('JOB_NOT_FOUND', { metadata: { jobId: rec.job.id } });
    if (done.resumed) ctx.events?.enqueued();
    return answer(done.rec);
  };

  const priority = ROUTES.setJobPriority;
  app.post(priority.path, { schema: { params: priority.params, body: priority.body } }, async (req) => {
    const rec = await unfinished(requireAuth(req).workspaceId, req.params.id);
    return change(rec, { priority: req.body.priority });
  });

  const pause = ROUTES.pauseJob;
  app.post(pause.path, { schema: { params: pause.params } }, async (req) => {
    return change(await unfinished(requireAuth(req).workspaceId, req.params.id), { paused: true });
  });

  const resume = ROUTES.resumeJob;
  app.post(resume.path, { schema: { params: resume.params } }, async (req) => {
    return change(await unfinished(requireAuth(req).workspaceId, req.params.id), { paused: false });
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
