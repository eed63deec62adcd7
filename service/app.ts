import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { API_PREFIX } from '../shared/constants.js';
import { buildOpenApiDocument } from '../shared/openapi.js';
import type { FsObjectStorage } from './adapters/fs-storage/fs-storage.js';
import type { ServiceContext } from './context.js';
import { slugOfUploadKey } from './domain/jobs.js';
import { makeAuthenticate } from './http/auth.js';
import { MemoryRateLimiter } from './adapters/memory-rate-limit.js';
import { InFlightLimit } from './http/in-flight.js';
import type { RateLimiter } from './ports/rate-limit.js';
import type { UrlSigner } from './adapters/fs-storage/url-signer.js';
import type { JobRecord } from './ports/jobs.js';
import { installMetrics } from './metrics/http.js';
import type { Metrics } from './metrics/registry.js';
import { BlobReceiver } from './blobs/blob-receiver.js';
import { BlobPartUrls } from './blobs/part-urls.js';
import type { BlobStore } from './ports/blobs.js';
import { blobPartRoutes } from './routes/blob-parts.js';
import type { BlobApiDeps } from './routes/blob-query.js';
import { storageRoutes } from './routes/storage.js';
import { PartialUploads } from './adapters/fs-storage/partial-uploads.js';
import { WORKER_API_PREFIX } from './worker-api/contract.js';
import { dashboardRoutes, originOf } from './dashboard/routes.js';
import { SessionAuth } from './http/session-auth.js';
import { sessionCookie } from './http/session-cookie.js';
import type { SessionStore } from './ports/sessions.js';
import type { TaskRunReader } from './ports/tasks.js';
import type { FrameStatsStore } from './ports/frame-stats.js';
import { baseApp } from './http/base-app.js';
import { apiRoutes } from './api-routes.js';
import type { RequeueStore } from './ports/requeues.js';
import { workerApiRoutes } from './worker-api/routes.js';
import { workerApiEnabled, workerApiOptions } from './worker-api/server.js';
import type { WorkerTokenAuth } from './ports/worker-tokens.js';
import type { WorkerQueue } from './worker-api/task-routes.js';
import type { WorkerRegistryReader, WorkerReporter } from './ports/workers.js';
import type { QueueLoad } from './ports/tasks.js';
import type { QueueOrder } from './ports/queue-order.js';
import type { ShareWeights } from './ports/share-weights.js';
import { readyzRoutes, type ReadinessDeps } from './routes/readyz.js';
import { StreamGate } from './http/stream-gate.js';
import { StorageQuota } from './http/storage-quota.js';
import type { StorageUsage } from './ports/usage.js';

export interface AppDeps extends ServiceContext {
  /** Present when objects live on this machine: the service then serves their presigned URLs. */
  fsStorage?: { storage: FsObjectStorage; signer: UrlSigner; root: string };
  /** A pino logger, or false for none. Default: none (tests); server.ts passes one. */
  logger?: FastifyServerOptions['loggerInstance'] | false;
  version?: string;
  /**
   * What the service does when a remote worker reports a job completed (enqueue the
   * onRenderComplete webhook; must be idempotent). Required while the worker API is on
   * (`workerTokens` or `config.workerToken` given).
   */
  onJobCompleted?: (rec: JobRecord) => Promise<void>;
  /** Prometheus registry to fill and serve at /metrics. Default none (no /metrics route). */
  metrics?: Metrics;
  /**
   * Where each key's request budget is kept: Redis shared by every instance makes it per farm.
   * Default: this process's memory (one instance), sized by config.rateLimitMax/WindowMs.
   */
  rateLimiter?: RateLimiter;
  /**
   * Failed authentications per remote address (service/http/auth-failures.ts): Redis makes the
   * count per farm. Default: this process's memory, sized by config.authFailureLimit/WindowMs.
   */
  authFailureLimiter?: RateLimiter;
  /** Most parts one blob query answer lists (tests lower it). Default MAX_PARTS_PER_QUERY_ANSWER (10,000). */
  blobQueryMaxParts?: number;
  /** Bytes each workspace keeps stored (openStack provides it). Default none: no storage quota is enforced. */
  usage?: StorageUsage;
  /**
   * The content-addressed upload extension's parts: the blob index, the signer of part URLs
   * and the origin they point at. Required while `config.blobUploads` is on (the default).
   */
  blobs?: { store: BlobStore; signer: UrlSigner; publicUrl: () => string };
  /**
   * Dashboard sessions (extension dashboard-sessions: sign-in, the cookie). Default none:
   * no sign-in, cookies are ignored.
   */
  sessions?: SessionStore;
  /** A job's tasks with who ran them and when (extension job-tasks). Default none: the route is not offered. */
  taskRuns?: TaskRunReader;
  /** Where requeues are linked (extension job-requeue; the SQL job stores). Default none: the extension is off. */
  requeues?: RequeueStore;
  /**
   * Knobs of GET /jobs/{id}/logs?follow=true (tests shorten them). Defaults: a read every 1000 ms,
   * backing off to one every 15000 ms while nothing changes, 10000 ms for runs still open once the job ended.
   */
  taskLogs?: { followPollMs?: number; followGraceMs?: number; followMaxPollMs?: number };
  /**
   * Knobs of GET /events (tests shorten them). Defaults: a read of each watched workspace every 1000
   * ms, a heartbeat every 15000 ms.
   */
  eventStream?: { pollMs?: number; heartbeatMs?: number };
  /** The clock sessions and upload URLs expire by, epoch ms. Default Date.now (tests move it). */
  clock?: () => number;
  /**
   * The worker registry and the queue's load (extension workers: GET /workers, and the worker
   * API's heartbeat route). Default none: the route is not offered.
   */
  workers?: {
    registry: WorkerReporter & WorkerRegistryReader;
    queue: QueueLoad & QueueOrder & Pick<ShareWeights, 'shareWeights'>;
  };
  /**
   * Per-worker tokens of the internal worker API (openStack provides them): with them, or with the
   * deprecated `config.workerToken`, the worker API is on. Default none: no worker API.
   */
  workerTokens?: WorkerTokenAuth;
  /**
   * The queue as remote workers use it through the worker API's task routes (openStack provides
   * it), so they need no queue credentials. Default none: those routes are not offered.
   */
  taskLeases?: WorkerQueue;
  /**
   * Per-frame statistics (extension frame-stats: GET /jobs/{id}/frames, the progress's `etaBand`, the worker API's
   * frame reports). Default none: the extension is off.
   */
  frameStats?: FrameStatsStore;
  /** What GET /readyz checks (openStack provides it). Default none: no /readyz route. */
  readiness?: Omit<ReadinessDeps, 'inProcessWorkers'>;
}

/** Sessions from the config's lifetimes and public URL, when the stack has a session store. */
function sessionAuth(deps: AppDeps): SessionAuth | undefined {
  if (!deps.sessions) return undefined;
  const c = deps.config;
  return new SessionAuth({
    store: deps.sessions,
    life: { idleMs: c.sessionIdleMinutes * 60_000, maxMs: c.sessionMaxHours * 3_600_000 },
    cookie: sessionCookie(c.publicUrl, c.sessionMaxHours * 3600),
    ...(deps.clock ? { now: deps.clock } : {}),
  });
}

/**
 * Where preview images may come from besides the page's origin: the public URL, the S3 endpoint
 * (any https host on AWS itself).
 */
function imageOrigins(deps: AppDeps): string[] {
  const s3 = deps.config.s3;
  return [...originOf(deps.config.publicUrl), ...originOf(s3?.endpoint), ...(s3 && !s3.endpoint ? ['https:'] : [])];
}

/**
 * Blob queries and commits one key may have in progress at once on this instance: the typed
 * client sends one at a time; more only queue heavy work in front of other tenants.
 */
const BLOB_CALLS_IN_FLIGHT = 2;

/** The extension's routes and what they share, when it is on. */
function blobExtension(
  deps: AppDeps,
  quota: StorageQuota | undefined,
  limiter: RateLimiter,
): { api: BlobApiDeps; urls: BlobPartUrls; receiver: BlobReceiver } | undefined {
  if (!deps.config.blobUploads) return undefined;
  if (!deps.blobs)
    throw new Error(
      'buildApp: config.blobUploads turns the content-addressed upload extension on, which needs deps.blobs ' +
        '(openStack provides it)',
    );
  const urls = new BlobPartUrls(deps.blobs.signer, deps.blobs.publicUrl);
  const receiver = new BlobReceiver({ index: deps.blobs.store, storage: deps.storage });
  const api: BlobApiDeps = {
    config: deps.config,
    index: deps.blobs.store,
    storage: deps.storage,
    urls,
    receiver,
    limiter,
    inFlight: new InFlightLimit(BLOB_CALLS_IN_FLIGHT, 'blob queries and commits'),
    ...(quota ? { quota } : {}),
    ...(deps.blobQueryMaxParts ? { maxPartsPerAnswer: deps.blobQueryMaxParts } : {}),
  };
  return { api, urls, receiver };
}

/** Builds the whole service as a fastify instance without listening (tests inject or listen). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const limiter =
    deps.rateLimiter ??
    new MemoryRateLimiter({ max: deps.config.rateLimitMax, windowMs: deps.config.rateLimitWindowMs });
  const failures =
    deps.authFailureLimiter ??
    new MemoryRateLimiter({ max: deps.config.authFailureLimit, windowMs: deps.config.authFailureWindowMs });
  const sessions = sessionAuth(deps);
  const authenticate = makeAuthenticate(deps.keys, limiter, sessions, failures);
  // One gate for both kinds of stream: a key's follows and event streams share its places.
  const streams = new StreamGate({ perKey: deps.config.maxStreamsPerKey, perProcess: deps.config.maxStreams });
  const app = baseApp({
    logger: deps.logger,
    bodyLimit: deps.config.bodyLimitBytes,
    frameworkAuth: (req) => (req.url.startsWith(`${API_PREFIX}/`) ? authenticate : undefined),
  });

  if (deps.metrics) installMetrics(app, deps.metrics, deps.config.metricsToken, deps.config.host);

  app.get('/healthz', async () => ({ status: 'ok', version: deps.version ?? 'dev' }));
  if (deps.readiness)
    await app.register(readyzRoutes, { ...deps.readiness, inProcessWorkers: deps.config.workers !== 0 });

  const openapi = buildOpenApiDocument();
  app.get(`${API_PREFIX}/openapi.json`, async () => openapi);
  await app.register(dashboardRoutes, { imageOrigins: imageOrigins(deps) });

  // The service's own storage keeps the bytes of a broken PUT (extension resumable-uploads); S3's
  // presigned PUTs go past the service, so there a PUT is all or nothing, as in the spec.
  const partials = deps.fsStorage ? new PartialUploads(deps.fsStorage.root) : undefined;
  if (deps.fsStorage) {
    const fs = deps.fsStorage;
    await app.register(storageRoutes, {
      storage: fs.storage,
      signer: fs.signer,
      root: fs.root,
      maxUploadBytes: deps.config.maxUploadBytes,
      ...(deps.clock ? { clock: deps.clock } : {}),
      ...(partials ? { partials, partialTtlMs: deps.config.uploadUrlTtlSeconds * 1000 } : {}),
      onPutComplete: async (key, result) => {
        const slug = slugOfUploadKey(key);
        if (slug) await deps.jobs.completeUpload(slug, result.size, result.sha256);
      },
    });
  }

  const quota = deps.usage
    ? new StorageQuota({ usage: deps.usage, quotaBytes: deps.config.workspaceStorageQuotaBytes })
    : undefined;
  const blobs = blobExtension(deps, quota, limiter);
  // Part bytes pass through the service on every storage adapter, so it can verify them.
  if (blobs) await app.register(blobPartRoutes, { urls: blobs.urls, receiver: blobs.receiver });

  // With a listener of its own (server.ts starts it), the public one does not serve the worker API.
  if (workerApiEnabled(deps) && deps.config.workerApiPort === undefined) {
    await app.register(workerApiRoutes, {
      prefix: WORKER_API_PREFIX,
      ...workerApiOptions(deps, (err) => app.log.warn({ err }, "recording a worker token's last use failed")),
    });
  }

  await app.register(
    async (api) =>
      apiRoutes(api, {
        deps,
        authenticate,
        limiter,
        failures,
        streams,
        ...(sessions ? { sessions } : {}),
        ...(partials ? { partials } : {}),
        ...(quota ? { quota } : {}),
        ...(blobs ? { blobs: blobs.api } : {}),
      }),
    { prefix: API_PREFIX },
  );
  return app;
}
