// A second app on a running test service's stores, listening on its own port: for tests that need
// knobs the service does not take from its config (a moved clock, short event-stream periods).
import type { FastifyInstance } from 'fastify';
import { API_PREFIX } from '../../../shared/constants.js';
import { buildApp, type AppDeps } from '../../../service/app.js';
import type { TestService } from '../../helpers/service.js';

export interface AppOn {
  app: FastifyInstance;
  origin: string;
  baseUrl: string;
  close(): Promise<void>;
}

export async function appOn(svc: TestService, extra: Partial<AppDeps> = {}): Promise<AppOn> {
  const app = await buildApp({ ...svc.service.ports, ...extra });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  const origin = `http://127.0.0.1:${port}`;
  return { app, origin, baseUrl: `${origin}${API_PREFIX}`, close: () => app.close() };
}
