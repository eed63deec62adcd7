// Idle workers start a task enqueued by another process within moments, not at their next poll:
// a real WorkerRuntime (three render lanes, a 10 s poll that cannot explain a quick start) on its
// own handle of a PostgreSQL-backed and of a BullMQ queue, the tasks enqueued through another
// handle as the service would. The handlers stand in for Blender: they note when they started.
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgres, type PostgresHandle } from '../../service/adapters/postgres/db.js';
import { PgJobStore } from '../../service/adapters/postgres/job-store.js';
import { signalledPgTaskQueue } from '../../service/adapters/postgres/task-queue.js';
import { BullmqTaskQueue } from '../../service/adapters/bullmq/task-queue.js';
import { newJobRecord } from '../../service/domain/jobs.js';
import type { TaskQueue } from '../../service/ports.js';
import { WorkerRuntime } from '../../service/worker/runtime.js';
import { createTestDatabase, requirePostgres } from '../helpers/postgres.js';
import { deletePrefix, requireRedis, uniquePrefix } from '../helpers/redis.js';

const pgUp = await requirePostgres('the worker wake-up tests');
const redisUrl = await requireRedis('the worker wake-up test on BullMQ');
const POLL_MS = 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const teardown: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const t of teardown.splice(0).reverse()) await t();
});

interface Farm {
  jobs: PgJobStore;
  /** The service's handle. */
  producer: TaskQueue;
  /** The worker's handle, as on another machine. */
  consumer: TaskQueue;
}

async function pgHandles(url: string, n: number): Promise<PostgresHandle[]> {
  const handles: PostgresHandle[] = [];
  for (let i = 0; i < n; i++) handles.push(await openPostgres(url, { maxConnections: 4 }));
  teardown.push(async () => void (await Promise.all(handles.map((h) => h.close()))));
  return handles;
}

async function postgresFarm(withBullmq: boolean): Promise<Farm> {
  const db = await createTestDatabase();
  teardown.push(() => db.drop());
  const [a, b] = await pgHandles(db.url, 2);
  const jobs = new PgJobStore(a!.db);
  if (!withBullmq) {
    const producer = signalledPgTaskQueue(a!.db, db.url);
    const consumer = signalledPgTaskQueue(b!.db, db.url);
    teardown.push(async () => void (await Promise.all([producer.close(), consumer.close()])));
    return { jobs, producer, consumer };
  }
  const prefix = uniquePrefix();
  const producer = await BullmqTaskQueue.open({ redisUrl: redisUrl!, prefix });
  const consumer = await BullmqTaskQueue.open({ redisUrl: redisUrl!, prefix });
  teardown.push(async () => {
    await Promise.all([producer.close(), consumer.close()]);
    await deletePrefix(prefix, redisUrl);
  });
  return { jobs, producer, consumer };
}

async function addJob(jobs: PgJobStore): Promise<string> {
  const slug = `up_${randomUUID()}`;
  const u = {
    slug, workspaceId: 'ws', userId: 'u', fileName: 'scene.blend', fileType: 'blend' as const, objectKey: `uploads/${slug}`,
    expiresAt: new Date(Date.now() + 1e6).toISOString(), createdAt: new Date().toISOString(), completedAt: null, size: 10, sha256: null, jobId: null,
  };
  await jobs.createUpload(u);
  const rec = newJobRecord(u, undefined);
  await jobs.createJobFromUpload(slug, rec);
  return rec.job.id;
}

/** Start delays (ms from enqueue to handler start) of tasks enqueued one by one, then of a burst. */
async function measure(farm: Farm): Promise<{ single: number[]; burst: number[] }> {
  const jobId = await addJob(farm.jobs);
  const enqueuedAt = new Map<string, number>();
  const startedAt = new Map<string, number>();
  const runtime = new WorkerRuntime(
    { jobs: farm.jobs, queue: farm.consumer, log: pino({ level: 'silent' }) },
    ['a', 'b', 'c'].map((name) => ({ name, kinds: ['render-chunk'] as const })),
    {
      'render-chunk': async (task) => {
        startedAt.set(task.id, Date.now());
        await sleep(150);
      },
    },
    { pollMs: POLL_MS, heartbeatMs: 1000 },
  );
  runtime.start();
  teardown.push(() => runtime.stop());
  // Let the lanes make their first (empty) claims and go idle, and the listener connect.
  const enqueue = async (id: string) => {
    enqueuedAt.set(id, Date.now());
    await farm.producer.enqueue({ id, jobId, kind: 'render-chunk' });
  };
  await sleep(1000);
  const single: string[] = [];
  for (let i = 0; i < 5; i++) {
    single.push(`one-${i}`);
    await enqueue(`one-${i}`);
    await sleep(400);
  }
  // Six at once for three idle lanes: the first signal wakes one lane, which wakes the next.
  const burst = Array.from({ length: 6 }, (_, i) => `burst-${i}`);
  await Promise.all(burst.map(enqueue));
  const until = Date.now() + 8000;
  while ([...single, ...burst].some((id) => !startedAt.has(id)) && Date.now() < until) await sleep(20);
  const delay = (id: string) => (startedAt.get(id) ?? Infinity) - enqueuedAt.get(id)!;
  console.log(`start delays: one by one ${single.map(delay).join(", ")} ms; burst ${burst.map(delay).join(", ")} ms`);
  return { single: single.map(delay), burst: burst.map(delay) };
}

describe.skipIf(!pgUp)('idle workers wake up when another process enqueues', () => {
  it('PostgreSQL queue (NOTIFY/LISTEN): each task starts within moments, not at the 10 s poll', async () => {
    const { single, burst } = await measure(await postgresFarm(false));
    expect(Math.max(...single), `single delays ${single.join(', ')} ms`).toBeLessThan(1000);
    // Three lanes for six tasks of 150 ms: the second three start when the first ones finish.
    expect(Math.max(...burst), `burst delays ${burst.join(', ')} ms`).toBeLessThan(2000);
  });

  it.skipIf(!redisUrl)('BullMQ queue (Redis pub/sub): each task starts within moments, not at the 10 s poll', async () => {
    const { single, burst } = await measure(await postgresFarm(true));
    expect(Math.max(...single), `single delays ${single.join(', ')} ms`).toBeLessThan(1000);
    expect(Math.max(...burst), `burst delays ${burst.join(', ')} ms`).toBeLessThan(2000);
  });
});
