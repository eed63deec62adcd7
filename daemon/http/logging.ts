// The daemon's logger: JSON lines (pino). Requests are logged without headers (the token and API
// key travel in Authorization), and pino blanks token, key and authorization fields wherever they
// appear as a second line of defence.
import type { FastifyRequest } from 'fastify';
import pino, { type DestinationStream, type Logger } from 'pino';

/** Paths pino replaces with `[redacted]`. */
export const DAEMON_REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  '*.authorization',
  'token',
  '*.token',
  'apiKey',
  '*.apiKey',
  'key',
  'secret',
  '*.secret',
  'webhookSecret',
  '*.webhookSecret',
];

/** pino serializer for requests: method, URL and id only, never a header. */
export function serializeDaemonRequest(req: FastifyRequest): Record<string, unknown> {
  return { method: req.method, url: req.url, requestId: req.id };
}

/** A pino logger at `level` (default `info`) on `destination` (default stdout). */
export function createDaemonLogger(level: pino.LevelWithSilent = 'info', destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { component: 'daemon' },
      redact: { paths: DAEMON_REDACT_PATHS, censor: '[redacted]' },
      serializers: { req: serializeDaemonRequest as never, err: pino.stdSerializers.err },
    },
    destination,
  );
}
