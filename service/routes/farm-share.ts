// GET /jobs/{id}/queue-ahead and GET /farm/share (extension scheduling): the claim order read for
// people, from the queue (QueueOrder, ShareWeights) and the worker registry (live and busy render
// slots). Not part of GET /jobs/{id}: walking the queue ahead costs as much as the queue is long,
// and clients poll that route.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ROUTES } from '../../shared/routes.js';
import { requireAuth } from '../http/auth.js';
import { busySlotJobs, expectedWait, farmShares, submitterLabels } from '../domain/farm-share.js';
import { shareGroupOf } from '../domain/scheduling.js';
import type { JobRecords } from '../ports/jobs.js';
import type { QueueOrder } from '../ports/queue-order.js';
import type { ShareWeights } from '../ports/share-weights.js';
import type { WorkerRegistryReader } from '../ports/workers.js';
import type { ServiceContext } from '../context.js';
import { loadJob } from './jobs.js';

export interface FarmShareRouteDeps {
  ctx: ServiceContext;
  queue: QueueOrder & Pick<ShareWeights, 'shareWeights'>;
  registry: WorkerRegistryReader;
  /** Every job by id, whatever its workspace: a busy slot counts for its job's group. */
  jobs: Pick<JobRecords, 'getById'>;
  /** Clock, epoch ms. Default Date.now. */
  now?: () => number;
}

export const farmShareRoutes: FastifyPluginAsyncZod<FarmShareRouteDeps> = async (app, deps) => {
  const now = () => (deps.now ?? Date.now)();

  const ahead = ROUTES.getJobQueueAhead;
  app.get(ahead.path, { schema: { params: ahead.params } }, async (req) => {
    const rec = await loadJob(deps.ctx, requireAuth(req).workspaceId, req.params.id);
    const [counts, loads, workers] = await Promise.all([
      deps.queue.queueAhead(rec.job.id),
      deps.queue.groupLoads(),
      deps.registry.listWorkers(),
    ]);
    const at = now();
    const liveSlots = busySlotJobs(workers, at).live;
    const framesAhead = counts?.frames ?? 0;
    return {
      data: {
        jobId: rec.job.id,
        waiting: counts !== null,
        framesAhead,
        jobsAhead: counts?.jobs ?? 0,
        liveSlots,
        expectedWaitSeconds: counts ? expectedWait(framesAhead, loads, liveSlots) : null,
        generatedAt: new Date(at).toISOString(),
      },
    };
  });

  const share = ROUTES.getFarmShare;
  app.get(share.path, async (req) => {
    const auth = requireAuth(req);
    const [loads, weights, workers, keys] = await Promise.all([
      deps.queue.groupLoads(),
      deps.queue.shareWeights(),
      deps.registry.listWorkers(),
      deps.ctx.keys.listKeys(),
    ]);
    const at = now();
    const busy = busySlotJobs(workers, at);
    const groupOf = new Map<string, string | undefined>();
    await Promise.all(
      [...new Set(busy.jobs)].map(async (id) => {
        const rec = await deps.jobs.getById(id);
        groupOf.set(id, rec && shareGroupOf(rec.job));
      }),
    );
    const running = new Map<string, number>();
    for (const id of busy.jobs) {
      const group = groupOf.get(id);
      if (group !== undefined) running.set(group, (running.get(group) ?? 0) + 1);
    }
    return {
      data: {
        // Submitters named by their keys' labels: the caller's own workspace's keys only.
        workspaces: farmShares(auth.workspaceId, loads, running, weights, submitterLabels(keys, auth.workspaceId)),
        liveSlots: busy.live,
        busySlots: busy.jobs.length,
        generatedAt: new Date(at).toISOString(),
      },
    };
  });
};
