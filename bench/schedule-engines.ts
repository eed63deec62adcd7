// The task queues bench:schedule measures, each opened fresh with the bench's clock: the real
// SQLite, PostgreSQL and BullMQ adapters, as the service opens them (PostgreSQL with its signal).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TaskQueue } from '../service/ports/tasks.js';
import { createTestDatabase, postgresProbe } from '../test/helpers/postgres.js';
import { deletePrefix, redisProbe, TEST_REDIS_URL, uniquePrefix } from '../test/helpers/redis.js';

export const SCHEDULE_ENGINES = ['SQLite', 'PostgreSQL', 'BullMQ'] as const;
export type ScheduleEngine = (typeof SCHEDULE_ENGINES)[number];

export interface ClockedQueue {
  queue: TaskQueue;
  close(): Promise<void>;
}

/** Why the engine cannot run here, or undefined. */
export async function scheduleEngineMissing(engine: ScheduleEngine): Promise<string | undefined> {
  if (engine === 'BullMQ') {
    const p = await redisProbe();
    return p.ok ? undefined : `no Redis (${p.reason})`;
  }
  if (engine === 'PostgreSQL') {
    const p = await postgresProbe();
    return p.ok ? undefined : `no PostgreSQL (${p.reason})`;
  }
  return undefined;
}

/** A fresh, empty queue of `engine` whose slot time is measured on `now`. */
export async function openClockedQueue(engine: ScheduleEngine, now: () => number): Promise<ClockedQueue> {
  if (engine === 'SQLite') {
    const { openSqlite } = await import('../service/adapters/sqlite/db.js');
    const { SqliteTaskQueue } = await import('../service/adapters/sqlite/task-queue.js');
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rb-bench-schedule-'));
    const h = await openSqlite(path.join(dir, 'state.sqlite'));
    const queue = new SqliteTaskQueue(h, now);
    return { queue, close: async () => (await queue.close(), await h.close(), await rm(dir, { recursive: true })) };
  }
  if (engine === 'PostgreSQL') {
    const { openPostgres } = await import('../service/adapters/postgres/db.js');
    const { PgTaskQueue } = await import('../service/adapters/postgres/task-queue.js');
    const tdb = await createTestDatabase();
    const pg = await openPostgres(tdb.url);
    const queue = new PgTaskQueue(pg.db, now);
    return { queue, close: async () => (await queue.close(), await pg.close(), await tdb.drop()) };
  }
  const { BullmqTaskQueue } = await import('../service/adapters/bullmq/task-queue.js');
  const prefix = uniquePrefix('rbbench');
  const queue = await BullmqTaskQueue.open({ redisUrl: TEST_REDIS_URL, prefix, now });
  return { queue, close: async () => (await queue.close(), await deletePrefix(prefix, TEST_REDIS_URL)) };
}
