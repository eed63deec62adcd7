// GET /readyz: whether this instance can do its work, for load balancers and orchestrators. It
// answers 200 when the database, the task queue and storage each answer, and at least one worker
// has a fresh heartbeat; else 503 with the error body naming each failed check and what to do.
// /healthz stays the liveness check (the process answers), so a farm without workers is alive
// but not ready. No API key: it tells nothing beyond which part is down (never URLs or errors
// that could hold credentials).
import type { FastifyPluginAsync } from 'fastify';
import type { ErrorDetail } from '../../shared/api/error-body.js';
import { ApiError } from '../http/api-error.js';
import { anyWorkerRunning } from '../domain/workers.js';
import type { ObjectStorage } from '../ports/storage.js';
import type { QueueHousekeeping } from '../ports/tasks.js';
import type { WorkerRegistryReader } from '../ports/workers.js';

export interface ReadinessDeps {
  /** Resolves once the state database answered a trivial query. */
  database: () => Promise<void>;
  queue: Pick<QueueHousekeeping, 'counts'>;
  storage: Pick<ObjectStorage, 'stat'>;
  workers: WorkerRegistryReader;
  /** Whether this service runs workers itself (config.workers > 0), for the advice. */
  inProcessWorkers: boolean;
  /** Longest each check may take before it counts as failed. Default 3000 ms. */
  checkTimeoutMs?: number;
  /** Clock, epoch ms. Default Date.now. */
  now?: () => number;
}

type CheckName = 'database' | 'queue' | 'storage' | 'workers';
interface CheckResult {
  ok: boolean;
  ms: number;
  /** What failed and what to do (failed checks only). */
  message?: string;
}

/** A stored key nobody writes: stat answers "absent" from a reachable storage. */
const PROBE_KEY = 'readyz/probe';

/** The error's code (ECONNREFUSED...) or a timeout: never its message, which may name a URL with a password. */
function why(err: unknown, timeoutMs: number): string {
  if (err instanceof CheckTimeout) return `no answer within ${timeoutMs / 1000} s`;
  const e = err as { code?: unknown; cause?: { code?: unknown }; name?: unknown };
  // Codes only: ECONNREFUSED, a PostgreSQL SQLSTATE (3D000), an SDK's error name (TimeoutError).
  const code = [e.code, e.cause?.code, e.name].find(
    (c) => typeof c === 'string' && /^(?:[A-Z0-9_]{2,40}|[A-Z][A-Za-z]{1,40}Error)$/.test(c) && c !== 'Error',
  );
  return code ? `failed (${code as string})` : 'failed';
}

class CheckTimeout extends Error {}

async function timed(fn: () => Promise<unknown>, timeoutMs: number): Promise<{ ms: number; err?: unknown }> {
  const t0 = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new CheckTimeout()), timeoutMs))),
    ]);
    return { ms: Date.now() - t0 };
  } catch (err) {
    return { ms: Date.now() - t0, err };
  } finally {
    clearTimeout(timer);
  }
}

export const readyzRoutes: FastifyPluginAsync<ReadinessDeps> = async (app, deps) => {
  const timeoutMs = deps.checkTimeoutMs ?? 3000;
  const now = deps.now ?? Date.now;
  app.get('/readyz', async (_req, reply) => {
    const [database, queue, storage, workers] = await Promise.all([
      timed(() => deps.database(), timeoutMs),
      timed(() => deps.queue.counts(), timeoutMs),
      timed(() => deps.storage.stat(PROBE_KEY), timeoutMs),
      timed(async () => {
        const list = await deps.workers.listWorkers();
        if (!anyWorkerRunning(list, now())) throw new NoWorker(list.length);
      }, timeoutMs),
    ]);
    const checks: Record<CheckName, CheckResult> = {
      database: result(
        database,
        () =>
          `the state database ${why(database.err, timeoutMs)}: check that it runs and that --database-url ` +
          `(or the data folder) is right`,
      ),
      queue: result(
        queue,
        () =>
          `the task queue ${why(queue.err, timeoutMs)}: check that Redis (--redis-url) or the database ` +
          `holding the queue runs`,
      ),
      storage: result(
        storage,
        () =>
          `object storage ${why(storage.err, timeoutMs)}: check that the S3 endpoint and bucket (--s3-*) ` +
          `answer, or that the data folder is readable`,
      ),
      workers: result(workers, () => workerAdvice(workers.err, deps.inProcessWorkers, timeoutMs)),
    };
    const failed = (Object.keys(checks) as CheckName[]).filter((k) => !checks[k].ok);
    if (failed.length === 0) return reply.header('cache-control', 'no-store').send({ status: 'ready', checks });
    const details: ErrorDetail[] = failed.map((k) => ({
      code: `${k}_not_ready`,
      path: [k],
      message: checks[k].message!,
    }));
    throw new ApiError('SERVICE_NOT_READY', {
      message: `Not ready: ${failed.join(', ')} failed. ${details.map((d) => d.message).join('; ')}.`,
      details,
      metadata: { checks },
    });
  });
};

class NoWorker extends Error {
  constructor(readonly known: number) {
    super('no worker heartbeat');
  }
}

function result(r: { ms: number; err?: unknown }, message: () => string): CheckResult {
  return r.err === undefined ? { ok: true, ms: r.ms } : { ok: false, ms: r.ms, message: message() };
}

function workerAdvice(err: unknown, inProcess: boolean, timeoutMs: number): string {
  if (!(err instanceof NoWorker))
    return `the worker registry ${why(err, timeoutMs)}: it lives in the state database, check that first`;
  const own = inProcess
    ? 'its own worker has not reported (is Blender installed?)'
    : 'this service runs no worker itself (--workers 0)';
  const remote =
    err.known > 0 ? `the ${err.known} known worker(s) are lost or stopped` : 'no `renderbridge worker` has reported';
  return (
    `no worker has a fresh heartbeat: ${own} and ${remote}; start a worker (renderbridge worker) that reaches ` +
    `this service, or run the service with --workers 1 or more`
  );
}
