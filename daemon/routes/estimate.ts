// A job's estimate (the service's extension estimate), read and canceled through the daemon with
// its API key: GET /jobs/:id/estimate and DELETE /jobs/:id/estimate. An estimate starts with a
// submission of mode `estimate` (POST /submissions), which follows it to the end; canceling here
// ends that submission ESTIMATE_CANCELED, the job still validated. Service errors pass through.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { JobIdParams } from '../../shared/api/job.js';
import { DAEMON_ROUTES } from '../../shared/daemon/api.js';
import type { ClientProvider } from '../ports.js';

export interface EstimateRouteDeps {
  clients: ClientProvider;
}

export const estimateRoutes: FastifyPluginAsyncZod<EstimateRouteDeps> = async (app, { clients }) => {
  const get = DAEMON_ROUTES.getJobEstimate;
  app.get(get.path, { schema: { params: JobIdParams, response: { 200: get.response } } }, async (req) =>
    (await clients.client()).getEstimate(req.params.id),
  );

  const cancel = DAEMON_ROUTES.cancelJobEstimate;
  app.delete(cancel.path, { schema: { params: JobIdParams, response: { 200: cancel.response } } }, async (req) =>
    (await clients.client()).cancelEstimate(req.params.id),
  );
};
