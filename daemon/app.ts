// The daemon's local HTTP API as a fastify instance that never listens (server.ts listens on
// 127.0.0.1). Every request passes the guard (no Origin but the daemon's own, a local Host, the
// token) except the webhook receiver, which checks its HMAC signature instead, and the job
// window's static files at /ui/ (routes/ui.ts), which hold no data and skip only the token. Routes are the entries of
// DAEMON_ROUTES, with bodies validated and answers serialised through the shared zod schemas.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { DAEMON_WEBHOOK_PATH } from '../shared/daemon/api.js';
import type { DaemonConfig } from './config.js';
import type { EventBus } from './track/events.js';
import { installDaemonErrorHandling, makeFrameworkErrors } from './http/errors.js';
import { makeGuard } from './http/guard.js';
import { createBackgroundPacks } from './pack/background.js';
import type { BackgroundPacks, ClientProvider, Downloads, Packer, Submissions, Tracker } from './ports.js';
import { schedulingRoutes } from './routes/scheduling.js';
import { estimateRoutes } from './routes/estimate.js';
import { eventRoutes } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { jobRoutes } from './routes/jobs.js';
import { packRoutes } from './routes/pack.js';
import { submissionRoutes } from './routes/submissions.js';
import { thumbnailRoutes } from './routes/thumbnails.js';
import { UI_PREFIX, uiRoutes } from './routes/ui.js';
import { webhookRoutes } from './routes/webhook.js';

export interface DaemonAppDeps {
  config: DaemonConfig;
  /** The access token every request must carry (state-file.ts newToken()). */
  token: string;
  /** Reported by GET /health. */
  version: string;
  /** ISO time the daemon started, reported by GET /health. */
  startedAt: string;
  events: EventBus;
  clients: ClientProvider;
  tracker: Tracker;
  packer: Packer;
  /** Background packs of POST /packs. Default: createBackgroundPacks over `packer`, publishing on `events`. */
  packs?: BackgroundPacks;
  submissions: Submissions;
  downloads: Downloads;
  /** A pino logger (see http/logging.ts createDaemonLogger), or false for none. Default: none. */
  logger?: FastifyServerOptions['loggerInstance'] | false;
  /** Largest JSON body, bytes. Default 32 MiB (a pack request may list many dependencies). */
  bodyLimitBytes?: number;
}

export function buildDaemonApp(deps: DaemonAppDeps): FastifyInstance {
  const guard = makeGuard({ token: deps.token, port, publicPaths: [DAEMON_WEBHOOK_PATH], assetPrefix: UI_PREFIX });
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    bodyLimit: deps.bodyLimitBytes ?? 32 * 1024 * 1024,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    frameworkErrors: makeFrameworkErrors(guard),
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installDaemonErrorHandling(app);

  function port(): number | undefined {
    const addr = app.server.address() as AddressInfo | string | null;
    return addr && typeof addr === 'object' ? addr.port : undefined;
  }
  app.addHook('onRequest', guard);
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
    reply.header('cache-control', 'no-store');
  });

  // JSON only; an empty body with a JSON Content-Type reads as no body (e.g. a bare cancel).
  app.removeContentTypeParser(['application/json', 'text/plain']);
  const json = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') done(null, undefined);
    else json(req, text, done);
  });

  const packs = deps.packs ?? createBackgroundPacks({ packer: deps.packer, events: deps.events });
  // Packs in progress stop, and streams end, before the server waits for its connections to close.
  app.addHook('preClose', async () => {
    await packs.close();
    deps.events.close();
  });

  void app.register(healthRoutes, {
    config: deps.config,
    clients: deps.clients,
    version: deps.version,
    startedAt: deps.startedAt,
  });
  void app.register(packRoutes, { packer: deps.packer, packs });
  void app.register(submissionRoutes, { submissions: deps.submissions });
  void app.register(jobRoutes, { tracker: deps.tracker, downloads: deps.downloads });
  void app.register(thumbnailRoutes, { clients: deps.clients });
  void app.register(estimateRoutes, { clients: deps.clients });
  void app.register(schedulingRoutes, { clients: deps.clients, tracker: deps.tracker });
  void app.register(eventRoutes, { events: deps.events });
  void app.register(webhookRoutes, { secret: deps.config.webhookSecret, tracker: deps.tracker });
  void app.register(uiRoutes, { serviceUrl: deps.config.serviceUrl });
  return app;
}
