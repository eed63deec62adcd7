// GET /health: version, the farm and profile in use now, and whether an API key is configured (never the key).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { DAEMON_ROUTES, type Health } from '../../shared/daemon/api.js';
import type { DaemonConfig } from '../config.js';
import type { ClientProvider } from '../ports.js';

export interface HealthRouteDeps {
  config: Pick<DaemonConfig, 'serviceUrl' | 'profile' | 'hotFolder'>;
  clients: ClientProvider;
  version: string;
  startedAt: string;
}

export const healthRoutes: FastifyPluginAsyncZod<HealthRouteDeps> = async (app, deps) => {
  const route = DAEMON_ROUTES.health;
  app.get(route.path, { schema: { response: { 200: route.response } } }, async (): Promise<Health> => {
    const source = await deps.clients.apiKeySource().catch(() => null);
    return {
      status: 'ok',
      version: deps.version,
      apiKeyConfigured: source !== null,
      apiKeySource: source,
      serviceUrl: deps.config.serviceUrl,
      profile: deps.config.profile,
      hotFolder: deps.config.hotFolder,
      pid: process.pid,
      startedAt: deps.startedAt,
    };
  });
};
