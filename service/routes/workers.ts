// GET /workers (extension workers): the farm's worker processes as the asking workspace may see
// them, and the queue's open tasks by kind. Read from the worker registry each worker reports to.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ROUTES } from '../../shared/routes.js';
import { TASK_KINDS, type QueueLoad } from '../ports/tasks.js';
import type { WorkerRegistryReader } from '../ports/workers.js';
import type { JobRecords } from '../ports/jobs.js';
import { requireAuth } from '../http/auth.js';
import { jobIdsOf, presentWorkers } from '../domain/workers.js';

export interface WorkerRouteDeps {
  registry: WorkerRegistryReader;
  queue: QueueLoad;
  /** The workspace's own jobs: named in the answer; others are not. */
  jobs: Pick<JobRecords, 'get'>;
  /** Clock, epoch ms. Default Date.now. */
  now?: () => number;
}

export const workerRoutes: FastifyPluginAsyncZod<WorkerRouteDeps> = async (app, deps) => {
  const route = ROUTES.listWorkers;
  app.get(route.path, async (req) => {
    const auth = requireAuth(req);
    const [workers, load] = await Promise.all([deps.registry.listWorkers(), deps.queue.countsByKind()]);
    const own = new Map<string, string | null>();
    await Promise.all(
      [...jobIdsOf(workers)].map(async (id) => {
        const rec = await deps.jobs.get(auth.workspaceId, id);
        if (rec) own.set(id, rec.job.sceneFile?.name ?? null);
      }),
    );
    const now = (deps.now ?? Date.now)();
    return {
      data: {
        workers: presentWorkers(workers, own, now),
        queue: TASK_KINDS.map((kind) => ({ kind, ...load[kind] })),
        generatedAt: new Date(now).toISOString(),
      },
    };
  });
};
