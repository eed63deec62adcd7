// The worker API's preemption reads (extension scheduling, warm mode): what a remote worker asks
// the queue before each frame when its operator turned preemption on (remote-waiting.ts), as a
// worker with the queue's credentials asks the queue itself (ports/waiting-priority.ts).
//
//   POST /tasks/waiting-top   WaitingTopBody  -> 200 { data: { priority, jobId, requiredTags } | null }
//   POST /tasks/hand-back-place HandBackPlaceBody -> 200 { data: boolean } (false: every place is taken)
//
// The answer names a job of any workspace, as a claim would hand it out, with no more about it
// than a worker needs to decide (its priority and required tags). A token's places are held
// under its own name (`<name>:<holder>`), so no worker can renew or free another's.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { JobRecords } from '../ports/jobs.js';
import { TASK_KINDS } from '../ports/tasks.js';
import { HAND_BACK_PLACE_MS, type WaitingPriority } from '../ports/waiting-priority.js';
import { workerOf } from './auth.js';

export const WAITING_ROUTES = {
  top: '/tasks/waiting-top',
  place: '/tasks/hand-back-place',
} as const;

const TaskKindWire = z.enum(TASK_KINDS);
const kinds = z.array(TaskKindWire).min(1).max(TASK_KINDS.length);

export const WaitingTopBody = z.strictObject({ kinds });
export const WaitingTopAnswer = z.object({
  data: z.object({ priority: z.int(), jobId: z.string(), requiredTags: z.array(z.string()) }).nullable(),
});
export const HandBackPlaceBody = z.strictObject({
  jobId: z.string().min(1).max(512),
  kinds,
  holder: z.string().min(1).max(600),
  ttlMs: z
    .int()
    .min(1000)
    .max(10 * HAND_BACK_PLACE_MS)
    .optional(),
});
export const HandBackPlaceAnswer = z.object({ data: z.boolean() });

export interface WaitingRouteOptions {
  queue: WaitingPriority;
  jobs: Pick<JobRecords, 'getById'>;
}

export const workerWaitingRoutes: FastifyPluginAsyncZod<WaitingRouteOptions> = async (app, { queue, jobs }) => {
  app.post(WAITING_ROUTES.top, { schema: { body: WaitingTopBody } }, async (req) => {
    const top = await queue.topWaiting(req.body.kinds);
    if (!top) return { data: null };
    // The worker may hold no task of this job, so it cannot read the job: the tags come with the answer.
    const rec = await jobs.getById(top.jobId);
    if (!rec) return { data: null };
    return { data: { priority: top.priority, jobId: top.jobId, requiredTags: rec.job.scheduling?.requiredTags ?? [] } };
  });

  app.post(WAITING_ROUTES.place, { schema: { body: HandBackPlaceBody } }, async (req) => {
    const who = workerOf(req);
    const { jobId, kinds: k, holder, ttlMs } = req.body;
    const owned = `${who.name ?? ''}:${holder}`;
    return { data: await queue.takeHandBackPlace(jobId, k, owned, ttlMs ?? HAND_BACK_PLACE_MS) };
  });
};
