// GET /metrics: on the service's own port (a fastify plugin), or on a small server of its own
// for `renderbridge worker` processes, which serve nothing else.
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { timingSafeEqual, createHash } from 'node:crypto';
import { ApiError } from '../http/api-error.js';
import type { Metrics } from './registry.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Whether `host` (a listen address) reaches only this machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * True when the request carries the token as a bearer token, or no token is set and the listener
 * reaches this machine only: metrics name routes, tasks and workers, which is no one else's business.
 */
function allowed(header: string | undefined, token: string | undefined, loopback: boolean): boolean {
  if (!token) return loopback;
  const m = /^Bearer (.+)$/.exec(header ?? '');
  return !!m && timingSafeEqual(digest(m[1]!), digest(token));
}

const NO_TOKEN =
  'This service listens beyond loopback and has no metrics token, so /metrics is closed: set ' +
  'RENDERBRIDGE_METRICS_TOKEN on the service and send "Authorization: Bearer <metrics token>".';

/**
 * Records every request's duration and serves /metrics: with bearer `token` when set; without one
 * only while the service listens on loopback (`host`).
 */
export function installMetrics(app: FastifyInstance, metrics: Metrics, token: string | undefined, host: string): void {
  const loopback = isLoopbackHost(host);
  app.addHook('onResponse', (req, reply, done) => {
    metrics.httpRequest(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', async (req, reply) => {
    if (!allowed(req.headers.authorization, token, loopback)) {
      throw new ApiError('METRICS_UNAUTHORIZED', {
        headers: { 'www-authenticate': 'Bearer' },
        ...(token ? {} : { message: NO_TOKEN }),
      });
    }
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}

/** A server answering only GET /metrics; resolves once it listens. */
export async function startMetricsServer(
  metrics: Metrics,
  opts: { host: string; port: number; token?: string },
): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    if (!allowed(req.headers.authorization, opts.token, isLoopbackHost(opts.host))) {
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
