// The internal worker API's routes (see contract.ts): the service writes job state on behalf of
// workers on other machines. Each call is authenticated (auth.ts) and scoped to the jobs of the
// worker's own leases (scope.ts); what it writes into internal state is checked (internal-state.ts).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { canTransition } from '../../shared/job-status.js';
import { ApiError } from '../http/api-error.js';
import type { JobPatch, JobRecord, JobRecords, WorkerJobStore } from '../ports/jobs.js';
import type { RateLimiter } from '../ports/rate-limit.js';
import type { TaskRunReader } from '../ports/tasks.js';
import type { WorkerTokenAuth } from '../ports/worker-tokens.js';
import type { WorkerRegistryReader, WorkerReporter } from '../ports/workers.js';
import { workerState } from '../domain/workers.js';
import { makeWorkerAuthenticate, workerOf } from './auth.js';
import {
  GetJobQuery,
  JobIdParams,
  PreviewGateBody,
  ProgressBody,
  SchedulingFieldsBody,
  TransitionBody,
  UpdateBody,
  WORKER_API_BODY_LIMIT,
  WORKER_ROUTES,
  WorkerReportWire,
} from './contract.js';
import { checkWorkerInternal } from './internal-state.js';
import { WorkerScope } from './scope.js';
import { workerTaskRoutes, type WorkerQueue } from './task-routes.js';
import { workerFrameRoutes } from './frame-routes.js';
import { workerWaitingRoutes } from './waiting-routes.js';
import { hasWaitingPriority } from '../ports/waiting-priority.js';
import type { FrameStatsWriter } from '../ports/frame-stats.js';
import { workerStorageRoutes, type WorkerObjectStorage } from './storage-routes.js';

export interface WorkerApiOptions {
  /**
   * Per-worker tokens (the state store; renderbridge admin create-worker-token). Default
   * none: only `legacyToken` works.
   */
  tokens?: WorkerTokenAuth;
  /** The deprecated farm-wide token (config.workerToken): not scoped to leases. Default none. */
  legacyToken?: string;
  /** The service's job store: the only writer of job state. */
  jobs: WorkerJobStore & Pick<JobRecords, 'setPreviewGate' | 'setSchedulingFields'>;
  /** Who holds each task's lease (the task queue): what scopes a worker's token. */
  tasks: TaskRunReader;
  /** Each token's request budget, apart from tenants'. Default none: unlimited. */
  limiter?: RateLimiter;
  /**
   * Runs when a worker reports a job completed: the service enqueues the onRenderComplete
   * webhook. Must be idempotent (a retried finalize reports twice).
   */
  onJobCompleted: (rec: JobRecord) => Promise<void>;
  /**
   * Where workers' heartbeats go and the live workers are read (extension workers). Default none:
   * the heartbeat and live-workers routes are not offered.
   */
  workers?: WorkerReporter & WorkerRegistryReader;
  /** The queue, for the task routes (workers without queue credentials). Default none: those routes are not offered. */
  queue?: WorkerQueue;
  /** Where remote workers' frame statistics go (extension frame-stats). Default none: the route is not offered. */
  frameStats?: FrameStatsWriter;
  /**
   * The service's storage, for the storage routes (remote workers without bucket keys). Default
   * none: those routes are not offered.
   */
  storage?: WorkerObjectStorage;
  /** Reports background failures (a last-used stamp not written). Default: dropped. */
  onError?: (err: unknown) => void;
}

/** The worker routes; register with `{ prefix: WORKER_API_PREFIX }`. */
export const workerApiRoutes: FastifyPluginAsyncZod<WorkerApiOptions> = async (app, opts) => {
  const { jobs } = opts;
  const scope = new WorkerScope({ jobs, tasks: opts.tasks });
  // JSON only, as on the public API: any other body type is a 415, never parsed as text.
  app.removeContentTypeParser('text/plain');
  app.addHook(
    'onRequest',
    makeWorkerAuthenticate({
      ...(opts.tokens ? { tokens: opts.tokens } : {}),
      ...(opts.legacyToken ? { legacyToken: opts.legacyToken } : {}),
      ...(opts.limiter ? { limiter: opts.limiter } : {}),
      ...(opts.onError ? { onError: opts.onError } : {}),
    }),
  );

  app.get(WORKER_ROUTES.whoami.path, async (req) => ({ name: workerOf(req).name }));

  app.get(WORKER_ROUTES.getJob.path, { schema: { params: JobIdParams, querystring: GetJobQuery } }, async (req) => {
    const who = workerOf(req);
    const via = req.query.via;
    return via && via !== req.params.id ? scope.viaJob(who, req.params.id, via) : scope.job(who, req.params.id);
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
          details: illegal.map(({ s, i }) => ({
            code: 'invalid_transition',
            path: ['body', 'from', String(i)],
            message: `a job cannot move from "${s}" to "${to}"`,
          })),
        });
      }
      const rec = await scope.job(workerOf(req), req.params.id);
      const checked = internal ? checkWorkerInternal(rec.job, internal) : undefined;
      return { data: (await jobs.transition(req.params.id, from, to, patch as JobPatch | undefined, checked)) ?? null };
    },
  );

  app.post(
    WORKER_ROUTES.update.path,
    { schema: { params: JobIdParams, body: UpdateBody }, bodyLimit: WORKER_API_BODY_LIMIT },
    async (req) => {
      const rec = await scope.job(workerOf(req), req.params.id);
      const checked = req.body.internal ? checkWorkerInternal(rec.job, req.body.internal) : undefined;
      return { data: (await jobs.update(req.params.id, req.body.patch as JobPatch, checked)) ?? null };
    },
  );

  app.post(
    WORKER_ROUTES.previewGate.path,
    { schema: { params: JobIdParams, body: PreviewGateBody }, bodyLimit: WORKER_API_BODY_LIMIT },
    async (req) => {
      const rec = await scope.job(workerOf(req), req.params.id);
      const { from, to, internal } = req.body;
      const checked = internal ? checkWorkerInternal(rec.job, internal) : undefined;
      return { data: (await jobs.setPreviewGate(req.params.id, from, to, checked)) ?? null };
    },
  );

  app.post(
    WORKER_ROUTES.scheduling.path,
    { schema: { params: JobIdParams, body: SchedulingFieldsBody } },
    async (req) => {
      await scope.job(workerOf(req), req.params.id);
      return { data: (await jobs.setSchedulingFields(req.params.id, req.body)) ?? null };
    },
  );

  app.put(WORKER_ROUTES.progress.path, { schema: { params: JobIdParams, body: ProgressBody } }, async (req, reply) => {
    if (req.body.jobId !== req.params.id) {
      throw new ApiError('VALIDATION_ERROR', {
        details: [
          {
            code: 'job_id_mismatch',
            path: ['body', 'jobId'],
            message: `jobId must be the job of the path (${req.params.id})`,
          },
        ],
      });
    }
    await scope.job(workerOf(req), req.params.id);
    await jobs.setProgress(req.body);
    return reply.code(204).send();
  });

  const registry = opts.workers;
  if (registry) {
    app.post(WORKER_ROUTES.heartbeat.path, { schema: { body: WorkerReportWire } }, async (req, reply) => {
      const { name } = workerOf(req);
      // A worker reports only as itself: its registry id starts with its token's name.
      if (name !== null && !req.body.id.startsWith(`${name}:`)) {
        throw new ApiError('WORKER_ID_MISMATCH', {
          details: [{ code: 'worker_id_mismatch', path: ['body', 'id'], message: `must start with "${name}:"` }],
          metadata: { workerName: name },
        });
      }
      await registry.report(req.body);
      return reply.code(204).send();
    });
    // The farm as placement reads it, so a remote worker says on a job that no live worker can take
    // it (a tag, memory, a Blender build), as the service's own workers do: slots, never tasks.
    app.get(WORKER_ROUTES.liveWorkers.path, async () => {
      const now = Date.now();
      const live = (await registry.listWorkers()).filter((w) => workerState(w, now) === 'running');
      return {
        workers: live.map((w) => ({
          id: w.id,
          heartbeatAgoMs: Math.max(0, now - w.heartbeatAt),
          heartbeatIntervalMs: w.heartbeatIntervalMs,
          slots: w.slots.map((sl) => ({
            id: sl.id,
            kind: sl.device.kind,
            ...(sl.memoryBytes !== undefined ? { memoryBytes: sl.memoryBytes } : {}),
          })),
          tags: w.tags ?? [],
          builds: w.builds.map((b) => ({ version: b.version })),
        })),
      };
    });
  }

  if (opts.queue) await app.register(workerTaskRoutes, { queue: opts.queue, scope });
  // Preemption reads (extension scheduling) where the queue answers them: all three queues do.
  if (opts.queue && hasWaitingPriority(opts.queue))
    await app.register(workerWaitingRoutes, { queue: opts.queue, jobs: opts.jobs });
  if (opts.frameStats) await app.register(workerFrameRoutes, { frames: opts.frameStats, scope });
  if (opts.storage) await app.register(workerStorageRoutes, { storage: opts.storage, scope, jobs });

  app.post(WORKER_ROUTES.completed.path, { schema: { params: JobIdParams } }, async (req, reply) => {
    // The service trusts its own record, not the worker's copy of it.
    const rec = await scope.job(workerOf(req), req.params.id);
    if (rec.job.status !== 'completed') {
      throw new ApiError('VALIDATION_ERROR', {
        message:
          `The job is "${rec.job.status}", not completed: report completion only after the transition to ` +
          `"completed" succeeded.`,
        details: [{ code: 'job_not_completed', path: ['params', 'id'], message: `job status is "${rec.job.status}"` }],
        metadata: { jobId: rec.job.id, status: rec.job.status },
      });
    }
    await opts.onJobCompleted(rec);
    return reply.code(204).send();
  });
};
