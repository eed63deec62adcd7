// Where the internal worker API is served: on the public listener (the default), or on a
// listener of its own (config.workerApiPort), e.g. bound to a farm-only network, in which case
// the public listener does not serve it at all.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app.js';
import { MemoryRateLimiter } from '../adapters/memory-rate-limit.js';
import { baseApp } from '../http/base-app.js';
import { WORKER_API_PREFIX } from './contract.js';
import { workerApiRoutes, type WorkerApiOptions } from './routes.js';
import { canSignWorkerPuts } from './storage-routes.js';

/**
 * On when the service can authenticate a worker: per-worker tokens (the state store), or
 * the deprecated farm-wide token.
 */
export function workerApiEnabled(deps: Pick<AppDeps, 'config' | 'workerTokens'>): boolean {
  return Boolean(deps.workerTokens || deps.config.workerToken);
}

/** The routes' options from the app's dependencies; each call makes its own per-token budgets. */
export function workerApiOptions(deps: AppDeps, onError?: (err: unknown) => void): WorkerApiOptions {
  if (!deps.onJobCompleted)
    throw new Error('buildApp: the worker API needs deps.onJobCompleted (enqueue the onRenderComplete webhook)');
  if (!deps.taskRuns)
    throw new Error(
      "buildApp: the worker API needs deps.taskRuns (who holds each task's lease scopes a worker's token)",
    );
  return {
    jobs: deps.jobs,
    tasks: deps.taskRuns,
    onJobCompleted: deps.onJobCompleted,
    // In memory per instance, whatever limits tenants: a worker's budget
    // is its own and never shares Redis round trips with the public API.
    limiter: new MemoryRateLimiter({ max: deps.config.workerApiRateLimitMax, windowMs: deps.config.rateLimitWindowMs }),
    ...(deps.workerTokens ? { tokens: deps.workerTokens } : {}),
    ...(deps.config.workerToken ? { legacyToken: deps.config.workerToken } : {}),
    ...(deps.workers ? { workers: deps.workers.registry } : {}),
    ...(deps.taskLeases ? { queue: deps.taskLeases } : {}),
    ...(deps.frameStats ? { frameStats: deps.frameStats } : {}),
    // On S3 a remote worker needs no bucket key: the storage routes sign its transfers.
    ...(canSignWorkerPuts(deps.storage) ? { storage: deps.storage } : {}),
    ...(onError ? { onError } : {}),
  };
}

/** The worker API alone, for its own listener (config.workerApiPort). */
export async function buildWorkerApiApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = baseApp({ logger: deps.logger, bodyLimit: deps.config.bodyLimitBytes });
  app.get('/healthz', async () => ({ status: 'ok', version: deps.version ?? 'dev' }));
  await app.register(workerApiRoutes, {
    prefix: WORKER_API_PREFIX,
    ...workerApiOptions(deps, (err) => app.log.warn({ err }, "recording a worker token's last use failed")),
  });
  return app;
}
