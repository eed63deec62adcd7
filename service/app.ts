import { randomUUID } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { API_PREFIX } from '../shared/constants.js';
import { buildOpenApiDocument } from '../shared/openapi.js';
import type { FsObjectStorage } from './adapters/fs-storage/fs-storage.js';
import type { ServiceContext } from './context.js';
import { slugOfUploadKey } from './domain/jobs.js';
import { ApiError } from './http/api-error.js';
import { makeAuthenticate } from './http/auth.js';
import { installErrorHandling } from './http/error-handler.js';
import type { UrlSigner } from './http/signing.js';
import { jobActionRoutes } from './routes/job-actions.js';
import { jobRoutes } from './routes/jobs.js';
import { progressRoutes } from './routes/progress.js';
import { storageRoutes } from './routes/storage.js';
import { uploadRoutes } from './routes/uploads.js';

export interface AppDeps extends ServiceContext {
  /** Present when objects live on this machine: the service then serves their presigned URLs. */
  fsStorage?: { storage: FsObjectStorage; signer: UrlSigner; root: string };
  /** A pino logger, or false for none. Default: none (tests); server.ts passes one. */
  logger?: FastifyServerOptions['loggerInstance'] | false;
  version?: string;
}

/** Builds the whole service as a fastify instance without listening (tests inject or listen). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    bodyLimit: deps.config.bodyLimitBytes,
    genReqId: () => randomUUID(),
    // Never trust a client-chosen id: it would let callers forge log correlation.
    requestIdHeader: false,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  installErrorHandling(app);

  app.get('/healthz', async () => ({ status: 'ok', version: deps.version ?? 'dev' }));

  const openapi = buildOpenApiDocument();
  app.get(`${API_PREFIX}/openapi.json`, async () => openapi);

  if (deps.fsStorage) {
    const fs = deps.fsStorage;
    await app.register(storageRoutes, {
      storage: fs.storage,
      signer: fs.signer,
      root: fs.root,
      maxUploadBytes: deps.config.maxUploadBytes,
      onPutComplete: async (key, result) => {
        const slug = slugOfUploadKey(key);
        if (slug) await deps.jobs.completeUpload(slug, result.size, result.sha256);
      },
    });
  }

  await app.register(
    async (api) => {
      // The API speaks JSON only: any other body type is a 415, never parsed as text.
      api.removeContentTypeParser('text/plain');
      api.addHook('onRequest', makeAuthenticate(deps.keys));
      await api.register(rateLimit, {
        hook: 'preParsing',
        max: deps.config.rateLimitMax,
        timeWindow: deps.config.rateLimitWindowMs,
        keyGenerator: (req) => req.auth?.keyId ?? req.ip,
        errorResponseBuilder: (_req, c) => {
          const seconds = Math.max(1, Math.ceil(c.ttl / 1000));
          return new ApiError('RATE_LIMITED', {
            metadata: { limit: c.max, retryAfterSeconds: seconds },
            headers: { 'retry-after': String(seconds) },
          });
        },
      });
      const ctx: ServiceContext = {
        config: deps.config,
        jobs: deps.jobs,
        storage: deps.storage,
        queue: deps.queue,
        keys: deps.keys,
        ...(deps.events ? { events: deps.events } : {}),
      };
      await api.register(uploadRoutes, ctx);
      await api.register(jobRoutes, ctx);
      await api.register(jobActionRoutes, ctx);
      await api.register(progressRoutes, ctx);
    },
    { prefix: API_PREFIX },
  );
  return app;
}

