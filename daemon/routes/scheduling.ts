// A job's priority, pause and resume, and "go" after its preview frames (the service's extension
// scheduling), through the daemon with its API key, for the add-on and the tray: POST
// /jobs/:id/priority, /pause, /resume and /approve-previews. Each answers the service's job and
// asks the tracker to look again, so the next job event carries the change. Service errors pass through.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { JobIdParams } from '../../shared/api/job.js';
import { SetPriorityBody } from '../../shared/api/scheduling.js';
import { DAEMON_ROUTES } from '../../shared/daemon/api.js';
import type { ClientProvider, Tracker } from '../ports.js';

export interface SchedulingRouteDeps {
  clients: ClientProvider;
  tracker: Pick<Tracker, 'kick'>;
}

export const schedulingRoutes: FastifyPluginAsyncZod<SchedulingRouteDeps> = async (app, { clients, tracker }) => {
  const done = <T>(job: T): T => {
    tracker.kick();
    return job;
  };
  const priority = DAEMON_ROUTES.setJobPriority;
  app.post(
    priority.path,
    { schema: { params: JobIdParams, body: SetPriorityBody, response: { 200: priority.response } } },
    async (req) => done(await (await clients.client()).setJobPriority(req.params.id, req.body.priority)),
  );
  const pause = DAEMON_ROUTES.pauseJob;
  app.post(pause.path, { schema: { params: JobIdParams, response: { 200: pause.response } } }, async (req) =>
    done(await (await clients.client()).pauseJob(req.params.id)),
  );
  const resume = DAEMON_ROUTES.resumeJob;
  app.post(resume.path, { schema: { params: JobIdParams, response: { 200: resume.response } } }, async (req) =>
    done(await (await clients.client()).resumeJob(req.params.id)),
  );
  const approve = DAEMON_ROUTES.approvePreviews;
  app.post(approve.path, { schema: { params: JobIdParams, response: { 200: approve.response } } }, async (req) =>
    done(await (await clients.client()).approvePreviews(req.params.id)),
  );
};
