// The worker API's task queue (see task-routes.ts): a worker on another machine claims, extends
// and ends its task leases through the service instead of holding the queue's credentials (Redis
// or database URLs). Same rules as the worker API's job routes: a worker's token acts only under
// lease ids starting `<token name>:`, and on the tasks of jobs it holds a lease on.
//
//   POST /tasks/claim          ClaimBody    -> 200 { data: Task | null }
//   POST /tasks/:taskId/extend LeaseBody    -> 200 { data: boolean } (false: the lease is not this worker's any more)
//   POST /tasks/:taskId/complete WorkerBody -> 204
//   POST /tasks/:taskId/release ReleaseBody -> 204
//   POST /tasks/:taskId/fail   FailBody     -> 204
//   POST /tasks/enqueue        EnqueueBody  -> 204 (a task of a job this worker holds a task of)
//   POST /tasks/enqueue-many   EnqueueManyBody -> 204: enqueue of each, in order, as one batch
//                              (TaskSubmitter.enqueueMany); every task's job must be one this worker
//                              holds a task of, else 404 and none is enqueued
//   POST /jobs/:id/cancel-tasks (no body)   -> 200 { data: number } tasks dropped
//   POST /jobs/:id/failures    { worker }   -> 200 { data: number } the slot's failures on the job
//   GET  /jobs/:id/failures                 -> 200 { data: Record<slot, number> }
//   GET  /tasks/counts                      -> 200 { data: { queued, running, done, failed } } (metrics)
import { z } from 'zod';
import { TASK_KINDS } from '../ports/tasks.js';

const id = z.string().min(1).max(512);
const workerId = z.string().min(1).max(600);
const leaseMs = z.int().min(1000).max(3_600_000);
const TaskKindWire = z.enum(TASK_KINDS);

export const TaskIdParams = z.strictObject({ taskId: id });
export const ClaimBody = z.strictObject({
  workerId,
  kinds: z.array(TaskKindWire).min(1).max(TASK_KINDS.length),
  leaseMs,
});
export const LeaseBody = z.strictObject({ workerId, leaseMs });
export const WorkerBody = z.strictObject({ workerId });
export const ReleaseBody = z.strictObject({
  workerId,
  delayMs: z.int().min(0).max(86_400_000).optional(),
  /** The jobs the task waits for (TaskLeases.release): their end makes it claimable at once. */
  waitFor: z.array(id).max(100).optional(),
});
export const FailBody = z.strictObject({
  workerId,
  retryable: z.boolean(),
  message: z.string().max(10_000),
  retryAfterMs: z.int().min(0).max(86_400_000).optional(),
});
export const EnqueueBody = z.strictObject({
  id,
  jobId: z.uuid(),
  kind: TaskKindWire,
  payload: z.record(z.string(), z.unknown()).optional(),
  after: z.array(id).max(100_000).optional(),
  priority: z.number().int().min(-1_000_000).max(1_000_000).optional(),
  shareGroup: z.string().max(600).optional(),
});
/** Tasks in one batch: the queues' own batch (a transaction, a Lua call) holds as many. */
export const ENQUEUE_MANY_MAX_TASKS = 1000;
/**
 * Largest body of a batch: above the service's default, which one task's body fits, since a finalize
 * names every chunk it waits for. Larger is 413 PAYLOAD_TOO_LARGE; the client splits below it.
 */
export const ENQUEUE_MANY_BODY_LIMIT = 8 * 1024 * 1024;
export const EnqueueManyBody = z.strictObject({
  tasks: z.array(EnqueueBody).min(1).max(ENQUEUE_MANY_MAX_TASKS),
});
export const FailureBody = z.strictObject({ worker: z.string().min(1).max(600) });

export const TaskWire = z.object({
  id,
  jobId: z.string(),
  kind: TaskKindWire,
  payload: z.record(z.string(), z.unknown()),
  attempts: z.int(),
});
export const ClaimAnswer = z.object({ data: TaskWire.nullable() });
export const BoolAnswer = z.object({ data: z.boolean() });
export const CountAnswer = z.object({ data: z.int() });
export const FailuresAnswer = z.object({ data: z.record(z.string(), z.int()) });
export const CountsAnswer = z.object({
  data: z.object({ queued: z.int(), running: z.int(), done: z.int(), failed: z.int() }),
});

/** The routes, fastify style, relative to WORKER_API_PREFIX. */
export const TASK_ROUTES = {
  claim: '/tasks/claim',
  extend: '/tasks/:taskId/extend',
  complete: '/tasks/:taskId/complete',
  release: '/tasks/:taskId/release',
  fail: '/tasks/:taskId/fail',
  enqueue: '/tasks/enqueue',
  enqueueMany: '/tasks/enqueue-many',
  counts: '/tasks/counts',
  cancelTasks: '/jobs/:id/cancel-tasks',
  failures: '/jobs/:id/failures',
} as const;
