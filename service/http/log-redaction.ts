import type { FastifyRequest } from 'fastify';
import { SIGNATURE_PARAMS } from './signing.js';

/** Replaces signature parameters of a URL with `[redacted]`, keeping the rest readable. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const name of SIGNATURE_PARAMS) if (params.has(name) && name === 'sig') params.set(name, '[redacted]');
  return `${url.slice(0, q)}?${params.toString()}`;
}

/** pino serializer for requests: no headers (Authorization), no signatures. */
export function serializeRequest(req: FastifyRequest): Record<string, unknown> {
  return { method: req.method, url: redactUrl(req.url), remoteAddress: req.ip, requestId: req.id };
}

/** Paths pino blanks wherever they appear, as a second line of defence. */
export const REDACT_PATHS = ['req.headers.authorization', 'headers.authorization', 'authorization', 'apiKey', 'key'];
