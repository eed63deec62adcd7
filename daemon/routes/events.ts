// GET /events: the Server-Sent Events stream of job changes, progress, submissions, downloads
// and renderComplete (DAEMON_EVENTS); see events.ts for the framing.
import type { FastifyPluginAsync } from 'fastify';
import { DAEMON_ROUTES } from '../../shared/daemon/api.js';
import type { EventBus } from '../track/events.js';

export interface EventRouteDeps {
  events: EventBus;
}

export const eventRoutes: FastifyPluginAsync<EventRouteDeps> = async (app, deps) => {
  app.get(DAEMON_ROUTES.events.path, async (req, reply) => {
    // The stream is written by the bus from now on, outside fastify's reply cycle.
    reply.hijack();
    deps.events.attach(req.raw, reply.raw);
  });
};
