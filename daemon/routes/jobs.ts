// The workspace's jobs as the tracker sees them: GET /jobs (last seen, no service call),
// GET /jobs/:id (fresh from the service), POST /jobs/:id/cancel, and POST /jobs/:id/download
// (outputs into a folder through the Downloads port). Service errors pass through unchanged.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { JobIdParams } from '../../shared/api/job.js';
import { DAEMON_ROUTES } from '../../shared/daemon/api.js';
import { DownloadRequest } from '../../shared/daemon/job-schemas.js';
import type { Downloads, Tracker } from '../ports.js';

export interface JobRouteDeps {
  tracker: Tracker;
  downloads: Downloads;
}

export const jobRoutes: FastifyPluginAsyncZod<JobRouteDeps> = async (app, deps) => {
  const list = DAEMON_ROUTES.listJobs;
  app.get(list.path, { schema: { response: { 200: list.response } } }, async () => ({ jobs: deps.tracker.list() }));

  const get = DAEMON_ROUTES.getJob;
  app.get(get.path, { schema: { params: JobIdParams, response: { 200: get.response } } }, async (req) =>
    deps.tracker.get(req.params.id),
  );

  const cancel = DAEMON_ROUTES.cancelJob;
  app.post(cancel.path, { schema: { params: JobIdParams, response: { 200: cancel.response } } }, async (req) =>
    deps.tracker.cancel(req.params.id),
  );

  const download = DAEMON_ROUTES.downloadJob;
  // No body, or `{}`, means the default folder.
  const body = DownloadRequest.nullish().transform((b) => b ?? {});
  app.post(
    download.path,
    { schema: { params: JobIdParams, body, response: { [download.status]: download.response } } },
    async (req, reply) => {
      return reply.code(download.status).send(deps.downloads.start(req.params.id, req.body.outDir));
    },
  );
};
