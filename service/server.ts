import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { API_PREFIX } from '../shared/constants.js';
import { buildApp } from './app.js';
import type { ServiceConfig } from './config.js';
import { REDACT_PATHS, serializeRequest } from './http/log-redaction.js';
import { openLocalStack, type LocalStack } from './local-stack.js';

export interface RunningService {
  app: FastifyInstance;
  /** Origin, e.g. `http://127.0.0.1:8420`. */
  origin: string;
  /** `origin` + `/api/external/v1`. */
  baseUrl: string;
  /** The adapters behind the app: the in-process worker runtime plugs into these. */
  ports: LocalStack['deps'];
  close(): Promise<void>;
}

export function createLogger(level: ServiceConfig['logLevel'], destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { req: serializeRequest as never, err: pino.stdSerializers.err },
    },
    destination,
  );
}

/** Opens the embedded stack, listens, and returns a handle whose close() drains and shuts down. */
export async function startService(config: ServiceConfig, opts: { logger?: Logger | false; version?: string } = {}): Promise<RunningService> {
  const stack = await openLocalStack(config);
  const logger = opts.logger === undefined ? createLogger(config.logLevel) : opts.logger;
  const app = await buildApp({ ...stack.deps, logger, ...(opts.version ? { version: opts.version } : {}) });
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await app.close();
    await stack.close();
    throw err;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const origin = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  stack.setPublicUrl(origin);
  let closing: Promise<void> | undefined;
  return {
    app,
    origin,
    baseUrl: `${config.publicUrl ?? origin}${API_PREFIX}`,
    ports: stack.deps,
    close: () =>
      (closing ??= (async () => {
        await app.close();
        await stack.close();
      })()),
  };
}
