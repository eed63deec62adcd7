// POST /jobs/{id}/requeue and GET /jobs/{id}/lineage (extension job-requeue): a new job from an
// ended job's stored project, validated again and then rendered with the old request (the worker
// does both: validate.ts, render-plan.ts). Another workspace's job is a 404, as everywhere.
import { scheduled } from '../domain/scheduling.js';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { IDEMPOTENT_REPLAY_HEADER } from '../../shared/constants.js';
import type { RequeueLink } from '../../shared/api/requeue.js';
import { ROUTES } from '../../shared/routes.js';
import { ApiError } from '../http/api-error.js';
import { requireAuth } from '../http/auth.js';
import { presentJob } from '../domain/jobs.js';
import { moveJob } from '../domain/job-lifecycle.js';
import { newRequeuedRecord, planRequeue, uploadSlugOf } from '../domain/requeue.js';
import { newTasks } from '../domain/tasks.js';
import type { ServiceContext } from '../context.js';
import type { JobRecord } from '../ports/jobs.js';
import type { RequeueLinkRecord, RequeueStore } from '../ports/requeues.js';
import { loadJob } from './jobs.js';

export interface RequeueRouteDeps {
  ctx: ServiceContext;
  requeues: RequeueStore;
}

const link = (l: RequeueLinkRecord, jobId: string): RequeueLink => ({
  jobId,
  frames: l.selection ? l.selection.split(',') : null,
  createdAt: l.createdAt,
});

export const requeueRoutes: FastifyPluginAsyncZod<RequeueRouteDeps> = async (app, { ctx, requeues }) => {
  const ttl = ctx.config.downloadUrlTtlSeconds;

  /**
   * Starts validation of a requeued job. Unlike POST /validate, the job moves before its task is
   * enqueued: the job row appears in the same request, and a worker woken at once by the enqueue
   * must never find it still `created` (it would drop the task). A crash between the two leaves
   * the job `validating` without a task; the request is retry-safe, and a repeat enqueues it again
   * (the task id is the job's, so an enqueue of a task that exists adds nothing).
   */
  const startValidation = async (rec: JobRecord): Promise<JobRecord> => {
    let now = rec;
    if (now.job.status === 'created') {
      const vc = now.internal.validationConfig;
      now =
        (await moveJob(ctx.jobs, rec.job.id, 'startValidation', {}, vc ? { validationConfig: vc } : {})) ??
        (await loadJob(ctx, rec.job.workspaceId, rec.job.id));
    }
    if (now.job.status === 'validating') {
      await ctx.queue.enqueue(scheduled(newTasks.validate(now.job.id), now.job));
      ctx.events?.enqueued();
    }
    return now;
  };

  const requeue = ROUTES.requeueJob;
  app.post(
    requeue.path,
    {
      schema: { params: requeue.params, body: requeue.body },
      // No body means no frames, as `{}` does.
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req);
      const old = await loadJob(ctx, auth.workspaceId, req.params.id);
      const plan = planRequeue(old, req.body);
      if (!plan.ok) {
        if (plan.error === 'VALIDATION_ERROR') throw new ApiError('VALIDATION_ERROR', { details: plan.details });
        throw new ApiError('JOB_NOT_REQUEUEABLE', { metadata: { jobId: old.job.id, status: plan.status } });
      }
      const fresh = newRequeuedRecord(old, plan.rerender);
      const { jobId, created } = await requeues.createRequeue(
        { sourceJobId: old.job.id, selection: plan.selection, uploadSlug: uploadSlugOf(old) },
        fresh,
      );
      const rec = await startValidation(created ? fresh : await loadJob(ctx, auth.workspaceId, jobId));
      const job = await presentJob(rec, ctx.storage, ttl);
      if (created) return reply.code(201).send(job);
      return reply.code(200).header(IDEMPOTENT_REPLAY_HEADER, 'true').send(job);
    },
  );

  const lineage = ROUTES.getJobLineage;
  app.get(lineage.path, { schema: { params: lineage.params } }, async (req) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    const { from, to } = await requeues.requeueLinks(rec.job.id);
    return {
      data: {
        jobId: rec.job.id,
        requeuedFrom: from ? link(from, from.sourceJobId) : null,
        requeues: to.map((l) => link(l, l.jobId)),
      },
    };
  });
};
