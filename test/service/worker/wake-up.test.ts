// Idle workers start a task enqueued by another process within moments, not at their next poll:
// a real WorkerRuntime (three render lanes, a 10 s poll that cannot explain a quick start) on its
// own handle of a PostgreSQL-backed and of a BullMQ queue, the tasks enqueued through another
// handle as the service would. The handlers stand in for Blender: they note when they started and
// hold their lane until the test lets them go, so every wait below is on an event, not a pause.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgres, type PostgresHandle } from '../../../service/adapters/postgres/db.js';
import { PgJobStore } from '../../../service/adapters/postgres/job-store.js';
import { signalledPgTaskQueue } from '../../../service/adapters/postgres/task-queue.js';
import { BullmqTaskQueue } from '../../../service/adapters/bullmq/task-queue.js';
import type { TaskKind, TaskQueue } from '../../../service/ports/tasks.js';
import { WorkerRuntime } from '../../../service/worker/runtime/runtime.js';
import { waitUntil } from '../../helpers/e2e.js';
import { addJob } from '../conformance/job-store/helpers.js';
import { createTestDatabase, requirePostgres } from '../../helpers/postgres.js';
import { deletePrefix, requireRedis, uniquePrefix } from '../../helpers/redis.js';

const pgUp = await requirePostgres('the worker wake-up tests');
const redisUrl = await requireRedis('the worker wake-up test on BullMQ');
const POLL_MS = 10_000;
/**
 * Longest start delay of a task enqueued alone: a quarter of the poll, so only a signal explains it,
 * with room for a busy CI machine.
 */
const SINGLE_MAX_MS = POLL_MS / 4;
/** Longest start delay in the burst (three wait for a lane): still half the poll. */
const BURST_MAX_MS = POLL_MS / 2;
/** Bound of every wait on a condition: generous, a failure shows as a start delay above. */
const WAIT = { timeoutMs: 30_000, intervalMs: 5 };

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

/** Start delays (ms from enqueue to handler start) of tasks enqueued one by one, then of a burst. */
async function measure(farm: Farm): Promise<{ single: number[]; burst: number[] }> {
  const jobId = (await addJob(farm.jobs, 'ws')).job.id;
  const enqueuedAt = new Map<string, number>();
  const startedAt = new Map<string, number>();
  const release = new Map<string, () => void>();
  const finished = new Set<string>();
  const runtime = new WorkerRuntime(
    { jobs: farm.jobs, queue: farm.consumer, log: pino({ level: 'silent' }) },
    ['a', 'b', 'c'].map((name) => ({ name, kinds: ['render-chunk'] as const })),
    {
      'render-chunk': async (task, ctx) => {
        startedAt.set(task.id, Date.now());
        // Held until let go, or until the runtime stops (a test that failed midway).
        await new Promise<void>((resolve) => {
          release.set(task.id, resolve);
          ctx.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        finished.add(task.id);
      },
    },
    { pollMs: POLL_MS, heartbeatMs: 1000 },
  );
  runtime.start();
  teardown.push(() => runtime.stop());
  const enqueue = async (id: string) => {
    enqueuedAt.set(id, Date.now());
    await farm.producer.enqueue({ id, jobId, kind: 'render-chunk' });
  };
  // The listener connects in the background (a signal before that is lost, by design). It is one
  // subscription per handle: once a listener of our own on the worker's handle hears a probe (of
  // a kind no lane runs), the runtime's listener hears too. A lane still in its first claim then
  // keeps the signal for its next one (IdleLanes).
  const heard: TaskKind[] = [];
  const off = farm.consumer.onReady?.((kind) => heard.push(kind));
  teardown.push(async () => off?.());
  for (let i = 0; !heard.includes('validate'); i++) {
    if (i >= 30) throw new Error("the worker's ready listener heard nothing after 30 probing enqueues");
    await farm.producer.enqueue({ id: `probe-${i}`, jobId, kind: 'validate' });
    await waitUntil('a probe signal', () => heard.includes('validate'), { timeoutMs: 500, intervalMs: 5 }).catch(
      () => undefined,
    );
  }
  // One by one: each starts, is let go and ends before the next is enqueued, as on an idle farm.
  const single: string[] = [];
  for (let i = 0; i < 5; i++) {
    const id = `one-${i}`;
    single.push(id);
    await enqueue(id);
    await waitUntil(`${id} to start`, () => release.get(id), WAIT).then((go) => go());
    await waitUntil(`${id} to end`, () => finished.has(id), WAIT);
  }
  // Six at once for three idle lanes: the first signal wakes one lane, which wakes the next. Each
  // is let go once it started, so the last three start as lanes free up.
  const burst = Array.from({ length: 6 }, (_, i) => `burst-${i}`);
  await Promise.all(burst.map(enqueue));
  await Promise.all(burst.map((id) => waitUntil(`${id} to start`, () => release.get(id), WAIT).then((go) => go())))
    // A task that never starts shows as an infinite delay in the assertion's message.
    .catch(() => undefined);
  const delay = (id: string) => (startedAt.get(id) ?? Infinity) - enqueuedAt.get(id)!;
  console.log(`start delays: one by one ${single.map(delay).join(', ')} ms; burst ${burst.map(delay).join(', ')} ms`);
  return { single: single.map(delay), burst: burst.map(delay) };
}

describe.skipIf(!pgUp)('idle workers wake up when another process enqueues', () => {
  it('PostgreSQL queue (NOTIFY/LISTEN): each task starts within moments, not at the 10 s poll', async () => {
    const { single, burst } = await measure(await postgresFarm(false));
    expect(Math.max(...single), `single delays ${single.join(', ')} ms`).toBeLessThan(SINGLE_MAX_MS);
    // Three lanes for six tasks: the second three start when the first ones finish.
    expect(Math.max(...burst), `burst delays ${burst.join(', ')} ms`).toBeLessThan(BURST_MAX_MS);
  });

  it.skipIf(!redisUrl)(
    'BullMQ queue (Redis pub/sub): each task starts within moments, not at the 10 s poll',
    async () => {
      const { single, burst } = await measure(await postgresFarm(true));
      expect(Math.max(...single), `single delays ${single.join(', ')} ms`).toBeLessThan(SINGLE_MAX_MS);
      expect(Math.max(...burst), `burst delays ${burst.join(', ')} ms`).toBeLessThan(BURST_MAX_MS);
    },
  );
});
