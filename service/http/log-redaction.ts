import type { FastifyReply, FastifyRequest } from 'fastify';

/** Replaces a URL's signature with `[redacted]`, keeping the rest (key, expiry) readable. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  if (!params.has('sig')) return url;
  params.set('sig', '[redacted]');
  return `${url.slice(0, q)}?${params.toString()}`;
}

/** pino serializer for requests: no headers (Authorization), no signatures. */
export function serializeRequest(req: FastifyRequest): Record<string, unknown> {
  return { method: req.method, url: redactUrl(req.url), remoteAddress: req.ip, requestId: req.id };
}

/** Paths pino blanks wherever they appear, as a second line of defence. */
export const REDACT_PATHS = ['req.headers.authorization', 'headers.authorization', 'authorization', 'apiKey', 'key'];

/**
 * The request's one log line, written when its answer is sent. Reads that succeed (clients poll a
 * job, the dashboard refreshes, probes ask /healthz) are at debug: at info a 30-second job watched
 * by one client wrote ~1,600 terminal lines and cost its render time (bench:render). Writes and
 * every answer of 400 or above stay at info.
 */
export function logRequest(req: FastifyRequest, reply: FastifyReply): void {
  const read = req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS';
  const level = read && reply.statusCode < 400 ? 'debug' : 'info';
  req.log[level](
    { req, res: { statusCode: reply.statusCode }, responseTime: Math.round(reply.elapsedTime * 10) / 10 },
    'request completed',
  );
}
