import type { FastifyRequest } from 'fastify';

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
