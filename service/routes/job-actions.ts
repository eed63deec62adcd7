import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { IDEMPOTENT_REPLAY_HEADER } from '../../shared/constants.js';
import { ROUTES } from '../../shared/routes.js';
import { ApiError } from '../http/api-error.js';
import { requireAuth } from '../http/auth.js';
import { presentJob } from '../domain/jobs.js';
import { movableFrom, moveJob, stoppedJobInternal } from '../domain/job-lifecycle.js';
import { newTasks } from '../domain/tasks.js';
import { initialScheduling, scheduled } from '../domain/scheduling.js';
import { DEFAULT_PRIORITY } from '../../shared/api/scheduling.js';
import { settleQueue } from '../domain/scheduling-change.js';
import type { SchedulingFields } from '../ports/jobs.js';
import { checkDependencies } from './render-dependencies.js';
import { checkAgainstAnalysis } from '../domain/render-config.js';
import type { ServiceContext } from '../context.js';
import { loadJob } from './jobs.js';

// Each action enqueues its task before moving the job: a crash in between leaves a task whose
// job is not in the expected state, which the worker drops, never a job waiting for no task.
// Task ids are derived from the job, so a repeated enqueue adds nothing.

export const jobActionRoutes: FastifyPluginAsyncZod<ServiceContext> = async (app, ctx) => {
  const ttl = ctx.config.downloadUrlTtlSeconds;
  const present = (rec: Parameters<typeof presentJob>[0]) => presentJob(rec, ctx.storage, ttl);

  const validate = ROUTES.validateJob;
  app.post(
    validate.path,
    {
      schema: { params: validate.params, body: validate.body },
      // "An empty object means defaults": a bodiless POST means the same.
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req);
      const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
      const refuse = (status: string) =>
        new ApiError('VALIDATE_NOT_ALLOWED', { metadata: { jobId: rec.job.id, status } });
      if (!movableFrom('startValidation').has(rec.job.status)) throw refuse(rec.job.status);
      await ctx.queue.enqueue(scheduled(newTasks.validate(rec.job.id), rec.job));
      const moved = await moveJob(
        ctx.jobs,
        rec.job.id,
        'startValidation',
        {},
        {
          validationConfig: req.body.validationConfig,
        },
      );
      if (!moved) throw refuse((await loadJob(ctx, auth.workspaceId, rec.job.id)).job.status);
      ctx.events?.enqueued();
      return reply.code(202).send(await present(moved));
    },
  );

  const render = ROUTES.renderJob;
  app.post(render.path, { schema: { params: render.params, body: render.body } }, async (req, reply) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    const replay = async () =>
      reply
        .code(200)
        .header(IDEMPOTENT_REPLAY_HEADER, 'true')
        .send(await present(rec));
    if (rec.internal.renderRequestedAt) return replay();
    if (!movableFrom('startRender').has(rec.job.status)) {
      throw new ApiError('RENDER_NOT_ALLOWED', { metadata: { jobId: rec.job.id, status: rec.job.status } });
    }
    const cfg = req.body.requestedRenderConfig;
    const problems = checkAgainstAnalysis(rec, cfg);
    if (problems.length > 0) throw new ApiError('VALIDATION_ERROR', { details: problems });
    // Extension scheduling: the request's choices, written field by field at the move (never the
    // whole scheduling read above), so a priority or pause set meanwhile stays; `paused` is never
    // the render's, nor the priority when the request names none.
    const asked = req.body.scheduling;
    const waitingFor = await checkDependencies(ctx.jobs, rec.job, asked?.dependsOn ?? []);
    const initial = initialScheduling(asked, waitingFor);
    const { paused: _paused, priority: _default, ...chosen } = initial;
    const fields: SchedulingFields = asked?.priority === undefined ? chosen : { ...chosen, priority: asked.priority };
    const before = rec.job.scheduling?.priority ?? DEFAULT_PRIORITY;
    const priority = asked?.priority ?? before;
    // The queue keeps the priority of a job's first task (its validation, queued at the priority the
    // job had then): a different one asked with the render is set on the job's queued tasks first.
    if (priority !== before) await ctx.queue.setJobPriority(rec.job.id, priority);
    await ctx.queue.enqueue(
      scheduled(newTasks.render(rec.job.id), { ...rec.job, scheduling: { ...initial, priority } }),
    );
    let moved = await moveJob(
      ctx.jobs,
      rec.job.id,
      'startRender',
      { requestedConfig: cfg },
      { renderRequestedAt: new Date().toISOString() },
      fields,
    );
    // A priority change that landed before the write told the queue its own: the queue is told
    // again what the job says now (domain/scheduling-change.ts).
    if (moved && asked?.priority !== undefined) moved = (await settleQueue(ctx, moved, 'priority')).rec;
    if (!moved) {
      // Lost a race: another call started the render (replay) or the job moved on.
      const now = await loadJob(ctx, auth.workspaceId, rec.job.id);
      if (now.internal.renderRequestedAt) {
        return reply
          .code(200)
          .header(IDEMPOTENT_REPLAY_HEADER, 'true')
          .send(await present(now));
      }
      throw new ApiError('RENDER_NOT_ALLOWED', { metadata: { jobId: rec.job.id, status: now.job.status } });
    }
    ctx.events?.enqueued();
    return reply.code(202).send(await present(moved));
  });

  const cancel = ROUTES.cancelJob;
  app.post(cancel.path, { schema: { params: cancel.params } }, async (req) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    const moved = await moveJob(
      ctx.jobs,
      rec.job.id,
      'cancel',
      undefined,
      stoppedJobInternal(ctx.config.outputRetentionDays),
    );
    if (!moved) {
      const now = await loadJob(ctx, auth.workspaceId, rec.job.id);
      throw new ApiError('CANCEL_NOT_ALLOWED', { metadata: { jobId: rec.job.id, status: now.job.status } });
    }
    await ctx.queue.cancelJob(rec.job.id);
    ctx.events?.canceled(rec.job.id);
    return present(moved);
  });
};
