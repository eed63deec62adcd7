// The internal worker API's routes (see contract.ts): the service writes job state on behalf of
// workers on other machines. Registered by buildApp only when a worker token is configured.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { canTransition } from '../../shared/job-status.js';
import { ApiError } from '../http/api-error.js';
import type { JobInternal, JobPatch, JobRecord, WorkerJobStore } from '../ports/jobs.js';
import { makeWorkerAuthenticate } from './auth.js';
import { JobIdParams, ProgressBody, TransitionBody, UpdateBody, WORKER_API_BODY_LIMIT, WORKER_ROUTES, WorkerReportWire } from './contract.js';
import type { WorkerReporter } from '../ports/workers.js';

export interface WorkerApiOptions {
  /** The shared secret workers present (config.workerToken); required, non-empty. */
  token: string;
  /** The service's job store: the only writer of job state. */
  jobs: WorkerJobStore;
  /**
   * Runs when a worker reports a job completed: the service enqueues the onRenderComplete
   * webhook. Must be idempotent (a retried finalize reports twice).
   */
  onJobCompleted: (rec: JobRecord) => Promise<void>;
  /** Where workers' heartbeats go (extension workers). Default none: the heartbeat route is not offered. */
  workers?: WorkerReporter;
}

function notFound(id: string): ApiError {
  return new ApiError('JOB_NOT_FOUND', { message: 'No job with this id: it may have been deleted, or the worker talks to another deployment.', metadata: { jobId: id } });
}

/** The worker routes; register with `{ prefix: WORKER_API_PREFIX }`. */
export const workerApiRoutes: FastifyPluginAsyncZod<WorkerApiOptions> = async (app, opts) => {
  const { jobs } = opts;
  // JSON only, as on the public API: any other body type is a 415, never parsed as text.
  app.removeContentTypeParser('text/plain');
  app.addHook('onRequest', makeWorkerAuthenticate(opts.token));

  app.get(WORKER_ROUTES.getJob.path, { schema: { params: JobIdParams } }, async (req) => {
    const rec = await jobs.getById(req.params.id);
    if (!rec) throw notFound(req.params.id);
    return rec;
  });

  app.post(
    WORKER_ROUTES.transition.path,
    { schema: { params: JobIdParams, body: TransitionBody }, bodyLimit: WORKER_API_BODY_LIMIT },
    async (req) => {
      const { from, to, patch, internal } = req.body;
      // The service enforces the state machine, whatever a worker (of any version) asks for.
      const illegal = from.flatMap((s, i) => (canTransition(s, to) ? [] : [{ s, i }]));
      if (illegal.length > 0) {
        throw new ApiError('VALIDATION_ERROR', {
          details: illegal.map(({ s, i }) => ({ code: 'invalid_transition', path: ['body', 'from', String(i)], message: `a job cannot move from "${s}" to "${to}"` })),
        });
      }
      const rec = await jobs.transition(req.params.id, from, to, patch as JobPatch | undefined, internal as Partial<JobInternal> | undefined);
      return { data: rec ?? null };
    },
  );

  app.post(
    WORKER_ROUTES.update.path,
    { schema: { params: JobIdParams, body: UpdateBody }, bodyLimit: WORKER_API_BODY_LIMIT },
    async (req) => {
      const rec = await jobs.update(req.params.id, req.body.patch as JobPatch, req.body.internal as Partial<JobInternal> | undefined);
      return { data: rec ?? null };
    },
  );

  app.put(WORKER_ROUTES.progress.path, { schema: { params: JobIdParams, body: ProgressBody } }, async (req, reply) => {
    if (req.body.jobId !== req.params.id) {
      throw new ApiError('VALIDATION_ERROR', {
        details: [{ code: 'job_id_mismatch', path: ['body', 'jobId'], message: `jobId must be the job of the path (${req.params.id})` }],
      });
    }
    await jobs.setProgress(req.body);
    return reply.code(204).send();
  });

  const registry = opts.workers;
  if (registry) {
    app.post(WORKER_ROUTES.heartbeat.path, { schema: { body: WorkerReportWire } }, async (req, reply) => {
      await registry.report(req.body);
      return reply.code(204).send();
    });
  }

  app.post(WORKER_ROUTES.completed.path, { schema: { params: JobIdParams } }, async (req, reply) => {
    // The service trusts its own record, not the worker's copy of it.
    const rec = await jobs.getById(req.params.id);
    if (!rec) throw notFound(req.params.id);
    if (rec.job.status !== 'completed') {
      throw new ApiError('VALIDATION_ERROR', {
        message: `The job is "${rec.job.status}", not completed: report completion only after the transition to "completed" succeeded.`,
        details: [{ code: 'job_not_completed', path: ['params', 'id'], message: `job status is "${rec.job.status}"` }],
        metadata: { jobId: rec.job.id, status: rec.job.status },
      });
    }
    await opts.onJobCompleted(rec);
    return reply.code(204).send();
  });
};
