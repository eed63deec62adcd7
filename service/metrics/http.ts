// GET /metrics: on the service's own port (a fastify plugin), or on a small server of its own
// for `renderbridge worker` processes, which serve nothing else.
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { timingSafeEqual, createHash } from 'node:crypto';
import { ApiError } from '../http/api-error.js';
import type { Metrics } from './registry.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** True when no token is set, or the request carries it as a bearer token. */
function allowed(header: string | undefined, token: string | undefined): boolean {
  if (!token) return true;
  const m = /^Bearer (.+)$/.exec(header ?? '');
  return !!m && timingSafeEqual(digest(m[1]!), digest(token));
}

/** Records every request's duration and serves /metrics (bearer `token` when set). */
export function installMetrics(app: FastifyInstance, metrics: Metrics, token: string | undefined): void {
  app.addHook('onResponse', (req, reply, done) => {
    metrics.httpRequest(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', async (req, reply) => {
    if (!allowed(req.headers.authorization, token)) {
      throw new ApiError('METRICS_UNAUTHORIZED', { headers: { 'www-authenticate': 'Bearer' } });
    }
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}

/** A server answering only GET /metrics; resolves once it listens. */
export async function startMetricsServer(metrics: Metrics, opts: { host: string; port: number; token?: string }): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    if (!allowed(req.headers.authorization, opts.token)) {
      res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, resolve);
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  return {
    server,
    url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}/metrics`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
