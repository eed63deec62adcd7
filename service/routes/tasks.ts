// GET /jobs/{id}/tasks (extension job-tasks): a job's tasks as the queue knows them, for the
// dashboard's job page. Another workspace's job is a 404, as everywhere.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ROUTES } from '../../shared/routes.js';
import { presentTask } from '../domain/task-runs.js';
import { requireAuth } from '../http/auth.js';
import type { ServiceContext } from '../context.js';
import type { TaskRunReader } from '../ports/tasks.js';
import { loadJob } from './jobs.js';

export interface TaskRouteDeps {
  ctx: ServiceContext;
  tasks: TaskRunReader;
}

export const taskRoutes: FastifyPluginAsyncZod<TaskRouteDeps> = async (app, { ctx, tasks }) => {
  const route = ROUTES.listJobTasks;
  app.get(route.path, { schema: { params: route.params } }, async (req) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    const now = Date.now();
    return { data: (await tasks.jobTaskRuns(rec.job.id)).map((t) => presentTask(t, now)) };
  });
};
