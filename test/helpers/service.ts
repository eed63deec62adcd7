// Starts the real reference service (real HTTP on a free port) in a temp folder: on the embedded
// defaults (SQLite, files), or with RENDERBRIDGE_TEST_STACK=scale on PostgreSQL, Redis (BullMQ)
// and S3 (s3rver), each fresh per service: the API suite runs on both (see vitest.config.ts).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect } from 'vitest';
import type { JobStatus } from '../../shared/job-status.js';
import type { ServiceConfig } from '../../service/config.js';
import { defaultConfig } from '../../service/config-defaults.js';
import { createApiKey } from '../../service/domain/api-keys.js';
import { openKeyStore } from '../../service/stack.js';
import { createLogger, startService, type RunningService, type StartOptions } from '../../service/server.js';
import type { WorkerTuning } from '../../service/worker/start.js';
import { api } from './http.js';

/** Which engines test services run on in this vitest project. */
export const TEST_STACK: 'embedded' | 'scale' = process.env.RENDERBRIDGE_TEST_STACK === 'scale' ? 'scale' : 'embedded';

/**
 * For tests of what only the service's own file storage does (it serves presigned PUTs itself);
 * on S3 the bucket answers those requests. Prints why when it skips.
 */
export function filesOnly(what: string): boolean {
  if (TEST_STACK === 'embedded') return false;
  console.warn(
    `skipped on the scale stack: ${what} is the service's own file storage; on S3 the bucket does it ` +
      `(test/service/conformance/s3.test.ts)`,
  );
  return true;
}

/** For tests of what only S3 storage does; prints why it skips on the embedded stack. */
export function scaleOnly(what: string): boolean {
  if (TEST_STACK === 'scale') return false;
  console.warn(`runs on the scale stack only: ${what}`);
  return true;
}

/** Where presigned object URLs of this service point: its own /storage/ route, or the S3 bucket. */
export function objectUrlPrefix(svc: { origin: string; config: ServiceConfig }): string {
  const s3 = svc.config.s3;
  return s3 ? `${s3.endpoint}/${s3.bucket}/` : `${svc.origin}/storage/`;
}

interface Engines {
  config: Partial<ServiceConfig>;
  close(): Promise<void>;
}

/** Fresh PostgreSQL database, Redis key prefix and S3 bucket for one scale-stack service. */
async function scaleEngines(): Promise<Engines> {
  // Loaded here, not at the top: the embedded stack (every file of `npm run test:unit`) never needs
  // pg and the PostgreSQL adapter, which cost each test file over a second to import.
  const [{ createTestDatabase }, { startS3 }] = await Promise.all([import('./postgres.js'), import('./s3.js')]);
  const db = await createTestDatabase();
  const s3 = await startS3().catch(async (err: unknown) => {
    await db.drop();
    throw err;
  });
  const prefix = `rbt-${randomBytes(5).toString('hex')}`;
  const redisUrl = process.env.RENDERBRIDGE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  return {
    config: { databaseUrl: db.url, redisUrl, queuePrefix: prefix, s3: s3.settings },
    close: async () => {
      await s3.close();
      await db.drop();
      await deleteRedisPrefix(redisUrl, prefix);
    },
  };
}

async function deleteRedisPrefix(url: string, prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    for (let cursor = '0'; ;) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      if ((cursor = next) === '0') break;
    }
  } finally {
    redis.disconnect();
  }
}

export interface TestService {
  baseUrl: string;
  origin: string;
  apiKey: string;
  workspaceId: string;
  dataDir: string;
  /** The service's settings (engines included): a restart test starts a second service with them. */
  config: ServiceConfig;
  service: RunningService;
  /** Every log line the service wrote, for checks that secrets never appear. */
  logs: string[];
  createApiKey(workspaceName: string): Promise<string>;
  /** Stops the service but keeps its data folder (for restart tests). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

/**
 * API tests play the worker themselves (moving jobs through the ports), so the in-process worker
 * is off unless a test asks for it with `workers`.
 */
export async function startTestService(
  options: Partial<ServiceConfig> & {
    dataDir?: string;
    worker?: WorkerTuning;
    webhooks?: StartOptions['webhooks'];
    /** The clock sessions and upload URLs expire by (StartOptions.clock). Default Date.now. */
    clock?: StartOptions['clock'];
  } = {},
): Promise<TestService> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'rb-svc-')));
  const { worker, webhooks, clock, ...rest } = options;
  // A restart test passes the engines of the first service back in (its databaseUrl etc.).
  const engines = TEST_STACK === 'scale' && !rest.databaseUrl ? await scaleEngines() : undefined;
  // debug: tests read the per-frame lines (render time billed, frame begun).
  const config = defaultConfig({ port: 0, logLevel: 'debug', workers: 0, ...engines?.config, ...rest, dataDir });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const service = await startService(config, {
    logger: createLogger(config.logLevel, sink),
    ...(worker ? { worker } : {}),
    ...(webhooks ? { webhooks } : {}),
    ...(clock ? { clock } : {}),
  });
  // A second connection to the same database, as `renderbridge admin` would open.
  const store = await openKeyStore(config);
  const first = await createApiKey(store.keys, { workspace: 'studio', label: 'test' });
  const mk = async (ws: string) => (await createApiKey(store.keys, { workspace: ws, label: 'test' })).key;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await service.close();
    await store.close();
  };
  return {
    baseUrl: service.baseUrl,
    origin: service.origin,
    apiKey: first.key,
    workspaceId: first.record.workspaceId,
    dataDir,
    service,
    logs,
    createApiKey: mk,
    stop,
    config,
    close: async () => {
      await stop();
      await engines?.close();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Moves job `id` along `path` in the service's store, as the worker would, expecting each step to be taken. */
export async function moveJob(svc: TestService, id: string, path: JobStatus[]): Promise<void> {
  for (let i = 1; i < path.length; i++)
    expect(await svc.service.ports.jobs.transition(id, [path[i - 1]!], path[i]!)).toBeDefined();
}

/** One test file's service (startTestService with defaults) and requests with its test key. */
export interface UsedService {
  /** The service; read it inside tests and hooks, once the file's beforeAll has started it. */
  readonly svc: TestService;
  /** Requests with the service's own test key; can be taken apart at once. */
  call: ReturnType<typeof api>;
}

/**
 * Registers the file's beforeAll (startTestService(settings)) and afterAll (close), as most API suites start.
 * `settings`: what the file's service runs with over the test defaults (a body limit, a quota, a rate limit);
 * default none.
 */
export function useTestService(settings: Parameters<typeof startTestService>[0] = {}): UsedService {
  let svc: TestService | undefined;
  let own: ReturnType<typeof api> | undefined;
  beforeAll(async () => {
    svc = await startTestService(settings);
    own = api(svc.baseUrl, svc.apiKey);
  });
  afterAll(() => svc?.close());
  const started = <T>(x: T | undefined): T => {
    if (x === undefined) throw new Error('useTestService: the service starts in beforeAll; use it from a test');
    return x;
  };
  return {
    get svc() {
      return started(svc);
    },
    call: ((...args: Parameters<ReturnType<typeof api>>) => started(own)(...args)) as ReturnType<typeof api>,
  };
}
