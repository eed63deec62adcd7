// The fastify instance every listener of the service starts from (the public app and the worker
// API's own listener): request ids the service chooses, one log line per request, JSON error
// bodies. Routes are added by the caller.
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { installErrorHandling, makeFrameworkErrors } from './error-handler.js';
import { logRequest } from './log-redaction.js';

export interface BaseAppOptions {
  /** pino logger; false for none. */
  logger: FastifyBaseLogger | false | undefined;
  /** Largest JSON body, bytes (config.bodyLimitBytes). */
  bodyLimit: number;
  /** The authentication a framework error (bad JSON, 415) runs first, per request. Default none. */
  frameworkAuth?: Parameters<typeof makeFrameworkErrors>[0];
}

export function baseApp(o: BaseAppOptions) {
  const app = Fastify({
    ...(o.logger ? { loggerInstance: o.logger } : { logger: false }),
    bodyLimit: o.bodyLimit,
    genReqId: () => randomUUID(),
    // Never trust a client-chosen id: it would let callers forge log correlation.
    requestIdHeader: false,
    // One line per request, written when it ends (below), instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    frameworkErrors: makeFrameworkErrors(o.frameworkAuth ?? ((_req: FastifyRequest) => undefined)),
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    logRequest(req, reply);
    done();
  });
  installErrorHandling(app);
  return app;
}

export type BaseApp = ReturnType<typeof baseApp> & FastifyInstance;
