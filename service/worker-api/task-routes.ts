// The worker API's task queue (task-contract.ts): leases through the service, so a remote worker
// needs neither Redis nor database credentials. A token claims and ends leases only under its own
// lease ids (`<name>:...`; the queue itself refuses to end a lease another id holds), and
// enqueues (a task, or a batch: enqueue-many), cancels or counts failures only for jobs it holds a task of.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ApiError } from '../http/api-error.js';
import type { FailureLedger, QueueHousekeeping, TaskLeases, TaskSubmitter } from '../ports/tasks.js';
import { enqueueAll } from '../domain/enqueue-all.js';
import { workerOf, type WorkerIdentity } from './auth.js';
import { JobIdParams } from './contract.js';
import {
  ClaimBody,
  ENQUEUE_MANY_BODY_LIMIT,
  EnqueueBody,
  EnqueueManyBody,
  FailBody,
  FailureBody,
  LeaseBody,
  ReleaseBody,
  TASK_ROUTES,
  TaskIdParams,
  WorkerBody,
} from './task-contract.js';
import type { WorkerScope } from './scope.js';

/** What the routes do to the queue. */
export type WorkerQueue = TaskLeases & FailureLedger & TaskSubmitter & Pick<QueueHousekeeping, 'counts'>;

export interface TaskRouteOptions {
  queue: WorkerQueue;
  scope: WorkerScope;
}

/** 403 unless `id` is one of the token's own: `<name><separator>...` (any id for the farm-wide token). */
function requireOwn(who: WorkerIdentity, id: string, separator: ':' | '/', path: string[]): void {
  if (who.name === null || id.startsWith(`${who.name}${separator}`)) return;
  throw new ApiError('WORKER_ID_MISMATCH', {
    details: [{ code: 'worker_id_mismatch', path, message: `must start with "${who.name}${separator}"` }],
    metadata: { workerName: who.name },
  });
}

export const workerTaskRoutes: FastifyPluginAsyncZod<TaskRouteOptions> = async (app, { queue, scope }) => {
  app.post(TASK_ROUTES.claim, { schema: { body: ClaimBody } }, async (req) => {
    requireOwn(workerOf(req), req.body.workerId, ':', ['body', 'workerId']);
    return { data: (await queue.claim(req.body.workerId, req.body.kinds, req.body.leaseMs)) ?? null };
  });

  app.post(TASK_ROUTES.extend, { schema: { params: TaskIdParams, body: LeaseBody } }, async (req) => {
    requireOwn(workerOf(req), req.body.workerId, ':', ['body', 'workerId']);
    return { data: await queue.extendLease(req.params.taskId, req.body.workerId, req.body.leaseMs) };
  });

  app.post(TASK_ROUTES.complete, { schema: { params: TaskIdParams, body: WorkerBody } }, async (req, reply) => {
    requireOwn(workerOf(req), req.body.workerId, ':', ['body', 'workerId']);
    await queue.complete(req.params.taskId, req.body.workerId);
    return reply.code(204).send();
  });

  app.post(TASK_ROUTES.release, { schema: { params: TaskIdParams, body: ReleaseBody } }, async (req, reply) => {
    requireOwn(workerOf(req), req.body.workerId, ':', ['body', 'workerId']);
    const { workerId, ...opts } = req.body;
    await queue.release(req.params.taskId, workerId, opts);
    return reply.code(204).send();
  });

  app.post(TASK_ROUTES.fail, { schema: { params: TaskIdParams, body: FailBody } }, async (req, reply) => {
    const { workerId, ...outcome } = req.body;
    requireOwn(workerOf(req), workerId, ':', ['body', 'workerId']);
    await queue.fail(req.params.taskId, workerId, outcome);
    return reply.code(204).send();
  });

  app.post(TASK_ROUTES.enqueue, { schema: { body: EnqueueBody } }, async (req, reply) => {
    await scope.job(workerOf(req), req.body.jobId);
    await queue.enqueue(req.body);
    return reply.code(204).send();
  });

  app.post(
    TASK_ROUTES.enqueueMany,
    { schema: { body: EnqueueManyBody }, bodyLimit: ENQUEUE_MANY_BODY_LIMIT },
    async (req, reply) => {
      // Every job first: a batch with one task out of the token's scope enqueues nothing.
      const who = workerOf(req);
      for (const jobId of new Set(req.body.tasks.map((t) => t.jobId))) await scope.job(who, jobId);
      await enqueueAll(queue, req.body.tasks);
      return reply.code(204).send();
    },
  );

  app.get(TASK_ROUTES.counts, async () => ({ data: await queue.counts() }));

  app.post(TASK_ROUTES.cancelTasks, { schema: { params: JobIdParams } }, async (req) => {
    await scope.job(workerOf(req), req.params.id);
    return { data: await queue.cancelJob(req.params.id) };
  });

  app.post(TASK_ROUTES.failures, { schema: { params: JobIdParams, body: FailureBody } }, async (req) => {
    const who = workerOf(req);
    // A failure is counted against one of the worker's own slots (`<name>/<lane>`).
    requireOwn(who, req.body.worker, '/', ['body', 'worker']);
    await scope.job(who, req.params.id);
    return { data: await queue.recordFailure(req.params.id, req.body.worker) };
  });

  app.get(TASK_ROUTES.failures, { schema: { params: JobIdParams } }, async (req) => {
    await scope.job(workerOf(req), req.params.id);
    return { data: await queue.jobFailures(req.params.id) };
  });
};
