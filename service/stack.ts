// Which engines the service runs on. The embedded defaults (SQLite, files under --data-dir, a
// database-backed queue) need nothing else; PostgreSQL, Redis (BullMQ) and S3 replace them one
// by one. Each engine's adapter is loaded only when chosen, so the defaults start fast.
import path from 'node:path';
import type { AppDeps } from './app.js';
import type { ServiceConfig } from './config.js';
import { openLocalState, openFsStorage, type StateEngine } from './local-stack.js';
import type { KeyStore } from './ports/keys.js';
import type { LeaseStore } from './ports/leases.js';
import type { BlobStore } from './ports/blobs.js';
import { UrlSigner } from './adapters/fs-storage/url-signer.js';
import type { ObjectStorage } from './ports/storage.js';
import type { RateLimiter } from './ports/rate-limit.js';
import type { TaskQueue } from './ports/tasks.js';
import type { DependencyWakes } from './ports/dependency-waits.js';
import { parseShareWeights } from './domain/share-weights.js';
import type { WorkerRegistry } from './ports/workers.js';
import type { WorkerTokenStore } from './ports/worker-tokens.js';
import type { WebhookStore } from './webhooks/ports.js';
import type { AnalysisCacheStore } from './ports/analysis-cache.js';

export interface Stack {
  /**
   * The app's dependencies, with the whole queue: the in-process worker and housekeeping
   * use more of it than the routes.
   */
  deps: Omit<AppDeps, 'logger' | 'queue' | 'workerTokens'> & {
    queue: TaskQueue;
    workerTokens: WorkerTokenStore;
    /** Scene analyses the in-process worker's validations reuse (WorkerEnv.analysisCache). */
    analysisCache: AnalysisCacheStore;
  };
  /** Webhook endpoints and the delivery outbox (onRenderComplete). */
  webhooks: WebhookStore;
  /** Leases for scheduled work that runs once across instances. */
  leases: LeaseStore;
  /** The blob index, for the collector (the app gets it in deps.blobs). */
  blobs: BlobStore;
  /** Each worker process's latest report: workers beside the service report here, the sweeper prunes it. */
  workerRegistry: WorkerRegistry;
  /** Engines in use, for the startup banner and logs (never with credentials). */
  engines: { state: 'sqlite' | 'postgres'; queue: 'database' | 'bullmq'; storage: 'files' | 's3' };
  /** Where the service is reachable; set once it listens (port 0 picks one). */
  setPublicUrl(url: string): void;
  close(): Promise<void>;
}

/** The state engine: SQLite under dataDir, or PostgreSQL at databaseUrl. */
export async function openState(config: ServiceConfig): Promise<StateEngine> {
  if (!config.databaseUrl) return openLocalState(config.dataDir);
  const { openPostgres } = await import('./adapters/postgres/db.js');
  const { PgJobStore } = await import('./adapters/postgres/job-store.js');
  const { PgKeyStore } = await import('./adapters/postgres/key-store.js');
  const { signalledPgTaskQueue } = await import('./adapters/postgres/task-queue.js');
  const { PgWebhookStore } = await import('./adapters/postgres/webhook-store.js');
  const { PgLeaseStore } = await import('./adapters/postgres/lease-store.js');
  const { PgBlobStore } = await import('./adapters/postgres/blob-store.js');
  const { blobUrlSecret } = await import('./adapters/sql/blob-secret.js');
  const { SqlSessionStore } = await import('./adapters/sql/session-store.js');
  const { SqlWorkerRegistry } = await import('./adapters/sql/worker-registry.js');
  const { SqlStorageUsage } = await import('./adapters/sql/storage-usage.js');
  const { SqlWorkerTokenStore } = await import('./adapters/sql/worker-token-store.js');
  const { SqlFrameStats } = await import('./adapters/sql/frame-stats.js');
  const { SqlAnalysisCache } = await import('./adapters/sql/analysis-cache.js');
  const { sql } = await import('kysely');
  const pg = await openPostgres(config.databaseUrl);
  const warn = (err: Error) =>
    console.warn(`renderbridge: ${err.message}; idle workers find new tasks by polling meanwhile`);
  const queue = signalledPgTaskQueue(pg.db, config.databaseUrl, warn);
  return {
    kind: 'postgres',
    jobs: new PgJobStore(pg.db),
    keys: new PgKeyStore(pg.db),
    queue,
    webhooks: new PgWebhookStore(pg.db),
    leases: new PgLeaseStore(pg.db),
    blobs: new PgBlobStore(pg.db),
    sessions: new SqlSessionStore(pg.db),
    blobUrlSecret: () => blobUrlSecret(pg.db),
    workers: new SqlWorkerRegistry(pg.db),
    workerTokens: new SqlWorkerTokenStore(pg.db),
    frameStats: new SqlFrameStats(pg.db),
    analysisCache: new SqlAnalysisCache(pg.db),
    usage: new SqlStorageUsage(pg.db),
    ping: async () => void (await sql`select 1`.execute(pg.db)),
    close: async () => {
      await queue.close();
      await pg.close();
    },
  };
}

/** The task queue: BullMQ when a Redis URL is given, else the state engine's own. */
export async function openQueue(
  config: ServiceConfig,
  fallback: (TaskQueue & DependencyWakes) | undefined,
  onError?: (err: Error) => void,
): Promise<TaskQueue & DependencyWakes> {
  if (!config.redisUrl) {
    if (!fallback) throw new Error('no task queue: pass --redis-url (or --database-url for the database-backed queue)');
    return fallback;
  }
  const { BullmqTaskQueue } = await import('./adapters/bullmq/task-queue.js');
  return BullmqTaskQueue.open({
    redisUrl: config.redisUrl,
    prefix: config.queuePrefix,
    ...(onError ? { onError } : {}),
  });
}

/** S3 storage from the settings; closing it closes its connections. */
export async function openS3(settings: NonNullable<ServiceConfig['s3']>): Promise<ObjectStorage & { close(): void }> {
  const { S3ObjectStorage } = await import('./adapters/s3/s3-storage.js');
  return S3ObjectStorage.fromSettings(settings);
}

/**
 * Rate-limit budgets in Redis, on a connection of their own with short timeouts: every API request
 * waits on it. Keys' request budgets and addresses' failed authentications share the connection.
 */
async function openRedisRateLimiters(
  config: ServiceConfig,
  onError?: (err: Error) => void,
): Promise<{ requests: RateLimiter; authFailures: RateLimiter }> {
  const [{ Redis }, { RedisRateLimiter }] = await Promise.all([
    import('ioredis'),
    import('./adapters/redis-rate-limit.js'),
  ]);
  const client = new Redis(config.redisUrl!, {
    commandTimeout: 1000,
    connectTimeout: 5000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: true,
  });
  // Errors are reported without the URL (it may hold a password); the limiter lets requests through meanwhile.
  const report = (err: Error) => onError?.(new Error(`rate-limit Redis: ${err.message}`));
  client.on('error', report);
  await client.connect();
  return {
    requests: new RedisRateLimiter(
      client,
      { max: config.rateLimitMax, windowMs: config.rateLimitWindowMs },
      { keyPrefix: `${config.queuePrefix}:rate-limit:`, onError: report },
    ),
    authFailures: new RedisRateLimiter(
      client,
      { max: config.authFailureLimit, windowMs: config.authFailureWindowMs },
      { keyPrefix: `${config.queuePrefix}:rate-limit:`, onError: report },
    ),
  };
}

export interface StackOptions {
  /** Background errors of the queue connection (Redis lost), password removed. Default: dropped. */
  onQueueError?: (err: Error) => void;
}

export async function openStack(config: ServiceConfig, opts: StackOptions = {}): Promise<Stack> {
  const closers: (() => Promise<void> | void)[] = [];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c();
  };
  try {
    const state = await openState(config);
    closers.push(state.close);
    const queue = await openQueue(config, state.queue, opts.onQueueError);
    if (queue !== state.queue) closers.push(() => queue.close());
    // A job's end wakes the renders waiting for it; a wake lost here is made up by their safety poll.
    state.jobs.onJobEnded((id) =>
      queue.jobEnded(id).catch((err: Error) => {
        opts.onQueueError?.(
          new Error(`waking the renders waiting for job ${id} failed: ${err.message}`, { cause: err }),
        );
      }),
    );
    for (const [group, weight] of parseShareWeights(config.shareWeights ?? []))
      await queue.setShareWeight(group, weight);
    const limiters = config.redisUrl ? await openRedisRateLimiters(config, opts.onQueueError) : undefined;
    const rateLimiter = limiters?.requests;
    if (rateLimiter) closers.push(() => void rateLimiter.close?.());
    let publicUrl = config.publicUrl ?? `http://${config.host}:${config.port}`;
    let storage: ObjectStorage;
    let fsStorage: AppDeps['fsStorage'];
    if (config.s3) {
      const s3 = await openS3(config.s3);
      closers.push(() => s3.close());
      storage = s3;
    } else {
      fsStorage = await openFsStorage(config.dataDir, () => publicUrl);
      storage = fsStorage.storage;
    }
    // Blob part URLs point at the service on every storage adapter (the service verifies the bytes).
    const blobs = {
      store: state.blobs,
      signer: new UrlSigner(await state.blobUrlSecret()),
      publicUrl: () => publicUrl,
    };
    return {
      deps: {
        config,
        jobs: state.jobs,
        keys: state.keys,
        sessions: state.sessions,
        taskRuns: queue,
        requeues: state.jobs,
        queue,
        storage,
        blobs,
        workers: { registry: state.workers, queue },
        workerTokens: state.workerTokens,
        frameStats: state.frameStats,
        analysisCache: state.analysisCache,
        taskLeases: queue,
        readiness: { database: state.ping, queue, storage, workers: state.workers },
        usage: state.usage,
        ...(fsStorage ? { fsStorage } : {}),
        ...(limiters ? { rateLimiter: limiters.requests, authFailureLimiter: limiters.authFailures } : {}),
      },
      webhooks: state.webhooks,
      leases: state.leases,
      blobs: state.blobs,
      workerRegistry: state.workers,
      engines: {
        state: state.kind,
        queue: config.redisUrl ? 'bullmq' : 'database',
        storage: config.s3 ? 's3' : 'files',
      },
      setPublicUrl(url: string) {
        if (!config.publicUrl) publicUrl = url.replace(/\/+$/, '');
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The key store alone, for admin commands run beside (or instead of) a running service. */
export async function openKeyStore(
  config: Pick<ServiceConfig, 'dataDir' | 'databaseUrl'> | string,
): Promise<{ keys: KeyStore; close(): Promise<void> }> {
  const c = typeof config === 'string' ? { dataDir: config, databaseUrl: undefined } : config;
  const state = await openState({ dataDir: path.resolve(c.dataDir), databaseUrl: c.databaseUrl } as ServiceConfig);
  return { keys: state.keys, close: state.close };
}

/** The embedded defaults whatever the config says about other engines (benchmarks, tools). */
export function openLocalStack(config: ServiceConfig): Promise<Stack> {
  return openStack({ ...config, databaseUrl: undefined, redisUrl: undefined, s3: undefined });
}
