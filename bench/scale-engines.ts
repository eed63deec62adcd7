// The queues bench:scale compares, opened the same way in the producer (this benchmark) and in
// every worker process: the job store is always the embedded SQLite one on the run's data folder,
// so the rows differ only in the task queue.
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openLocalState } from '../service/local-stack.js';
import type { TaskQueue } from '../service/ports/tasks.js';
import type { WorkerJobStore } from '../service/ports/jobs.js';
import { createTestDatabase, postgresProbe, postgresTestUrl } from '../test/helpers/postgres.js';
import { redactRedisUrl } from '../service/adapters/bullmq/redis-client.js';
import { deletePrefix, redisProbe, TEST_REDIS_URL } from '../test/helpers/redis.js';

export const ENGINES = ['embedded', 'bullmq', 'postgres'] as const;
export type EngineName = (typeof ENGINES)[number];

export const ENGINE_LABEL: Record<EngineName, string> = {
  embedded: 'embedded (SQLite)',
  bullmq: 'BullMQ (Redis)',
  postgres: 'PostgreSQL',
};

/** Everything a process needs to open one measurement's job store and queue. */
export interface EngineSpec {
  engine: EngineName;
  /** Data folder holding the SQLite database with the seeded jobs (and, for `embedded`, the queue). */
  dataDir: string;
  /** BullMQ only: Redis URL and the key prefix of this measurement. */
  redisUrl?: string;
  prefix?: string;
  /** PostgreSQL only: URL of this measurement's own database. */
  pgUrl?: string;
}

export interface OpenEngine {
  jobs: WorkerJobStore;
  queue: TaskQueue;
  close(): Promise<void>;
}

export async function openEngine(spec: EngineSpec): Promise<OpenEngine> {
  const state = await openLocalState(spec.dataDir);
  try {
    if (spec.engine === 'embedded') return { jobs: state.jobs, queue: state.queue, close: state.close };
    if (spec.engine === 'bullmq') {
      const { BullmqTaskQueue } = await import('../service/adapters/bullmq/task-queue.js');
      const queue = await BullmqTaskQueue.open({ redisUrl: spec.redisUrl!, prefix: spec.prefix! });
      return { jobs: state.jobs, queue, close: async () => (await queue.close(), await state.close()) };
    }
    const { openPostgres } = await import('../service/adapters/postgres/db.js');
    const { signalledPgTaskQueue } = await import('../service/adapters/postgres/task-queue.js');
    const pg = await openPostgres(spec.pgUrl!);
    // As the service opens it: with its ready signal (NOTIFY/LISTEN).
    const queue = signalledPgTaskQueue(pg.db, spec.pgUrl!);
    return { jobs: state.jobs, queue, close: async () => (await queue.close(), await pg.close(), await state.close()) };
  } catch (err) {
    await state.close();
    throw err;
  }
}

/** Why `engine` cannot run here (its server does not answer), or undefined when it can. */
export async function engineMissing(engine: EngineName): Promise<string | undefined> {
  if (engine === 'bullmq') {
    const p = await redisProbe();
    return p.ok
      ? undefined
      : `BullMQ needs Redis at ${redactRedisUrl(TEST_REDIS_URL)} (${p.reason}); start redis-server or set ` +
          `RENDERBRIDGE_TEST_REDIS_URL`;
  }
  if (engine === 'postgres') {
    const p = await postgresProbe();
    return p.ok ? undefined : `PostgreSQL is not reachable (${p.reason}); start it or set RENDERBRIDGE_TEST_PG_URL`;
  }
  return undefined;
}

/** Where the BullMQ row's Redis is (for the results text; no password). */
export function redisServer(): string {
  const u = new URL(TEST_REDIS_URL);
  return `${u.hostname}:${u.port || 6379}`;
}

/** Where the PostgreSQL row's databases are created (for the results text; no password). */
export function pgServer(): string {
  const u = new URL(postgresTestUrl());
  return `${u.hostname}:${u.port || 5432}`;
}

/**
 * A fresh measurement: a copy of the seeded data folder, plus a Redis prefix or a PostgreSQL
 * database of its own; `cleanup` deletes all of them.
 */
export async function prepareEngine(
  engine: EngineName,
  seededDir: string,
  tmpRoot: string,
): Promise<{ spec: EngineSpec; cleanup(): Promise<void> }> {
  const dataDir = await mkdtemp(path.join(tmpRoot, `${engine}-`));
  await cp(seededDir, dataDir, { recursive: true });
  const removeDir = () => rm(dataDir, { recursive: true, force: true });
  if (engine === 'embedded') return { spec: { engine, dataDir }, cleanup: removeDir };
  if (engine === 'bullmq') {
    const prefix = `rb-bench-scale-${randomBytes(6).toString('hex')}`;
    return {
      spec: { engine, dataDir, redisUrl: TEST_REDIS_URL, prefix },
      cleanup: async () => (await deletePrefix(prefix), await removeDir()),
    };
  }
  const db = await createTestDatabase();
  return { spec: { engine, dataDir, pgUrl: db.url }, cleanup: async () => (await db.drop(), await removeDir()) };
}

/** A temp folder for the whole run. */
export function tmpRootDir(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'rb-bench-scale-'));
}
