// The BullMQ task queue against the TaskQueue conformance suite (shared test Redis, one key prefix
// per harness), and against faults: redis-server killed mid-job, an outage, racing instances.
import { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { bullJobId } from '../../../service/adapters/bullmq/keys.js';
import { BullmqTaskQueue } from '../../../service/adapters/bullmq/task-queue.js';
import type { QueueScripts } from '../../../service/adapters/bullmq/scripts.js';
import type { Task, TaskKind, TaskQueue } from '../../../service/ports/tasks.js';
import {
  deletePrefix,
  requireRedis,
  requireRedisServer,
  startThrowawayRedis,
  uniquePrefix,
  type ThrowawayRedis,
} from '../../helpers/redis.js';
import { waitUntil } from '../../helpers/e2e.js';
import { taskQueueConformance } from './task-queue.js';

const redisUrl = await requireRedis('the BullMQ task queue tests');
const canSpawnRedis = requireRedisServer('the BullMQ fault tests');
const ALL_KINDS: TaskKind[] = ['validate', 'render', 'render-chunk', 'finalize'];
/**
 * The next claim that gets a task, polled: a grace or a lease runs out on Redis's clock, so the
 * test waits for the task to come back rather than waiting out a guessed time.
 */
const claimOnceFree = (q: TaskQueue, workerId: string, kind: TaskKind, what: string) =>
  waitUntil(what, () => q.claim(workerId, [kind], 60_000), { timeoutMs: 15_000, intervalMs: 20 });

describe.skipIf(!redisUrl)('BullMQ task queue on the test Redis', () => {
  taskQueueConformance('BullMQ', async () => {
    const prefix = uniquePrefix();
    const open = () => BullmqTaskQueue.open({ redisUrl: redisUrl!, prefix });
    let queue = await open();
    const others: BullmqTaskQueue[] = [];
    return {
      queue,
      reopen: async () => {
        await queue.close();
        queue = await open();
        return queue;
      },
      // Another service instance on the same Redis and prefix.
      other: async () => {
        others.push(await open());
        return others.at(-1)!;
      },
      close: async () => {
        await Promise.all([queue, ...others].map((q) => q.close()));
        await deletePrefix(prefix, redisUrl);
      },
    };
  });

  /** The queue, plus plain BullMQ access to its Redis for playing a crash between two steps. */
  const withCrashes = async (fn: (q: BullmqTaskQueue, bull: (kind: TaskKind) => Queue) => Promise<void>) => {
    const prefix = uniquePrefix();
    const q = await BullmqTaskQueue.open({ redisUrl: redisUrl!, prefix, handOverGraceMs: 200 });
    const client = new Redis(redisUrl!, { maxRetriesPerRequest: null });
    const queues = new Map<TaskKind, Queue>();
    const bull = (kind: TaskKind) =>
      queues.get(kind) ?? queues.set(kind, new Queue(kind, { connection: client, prefix })).get(kind)!;
    try {
      await fn(q, bull);
    } finally {
      await Promise.all([q.close(), ...[...queues.values()].map((x) => x.close())]);
      client.disconnect();
      await deletePrefix(prefix, redisUrl);
    }
  };

  /** A claim's first step alone: it takes the next task from the claim order, as a claim that then died did. */
  const takeWithoutHandOver = (q: BullmqTaskQueue, kind: TaskKind) =>
    (q as unknown as { scripts: QueueScripts }).scripts.preclaim([kind], 200);

  /**
   * A claim right after a cut-short hand-over finds nothing until the grace (200 ms) has passed. On a
   * loaded machine the grace may already be over by then: a task is fine only if it has.
   */
  const notBeforeGrace = (task: Task | undefined, took: number) => {
    if (task) expect(Date.now() - took).toBeGreaterThanOrEqual(200);
    return task;
  };

  it('hands a task to BullMQ again when a crash cut the hand-over short, also one freed by a join', () =>
    withCrashes(async (q, bull) => {
      await q.enqueue({ id: 'validate:j', jobId: 'j', kind: 'validate', payload: { n: 1 } });
      const took = Date.now();
      expect((await takeWithoutHandOver(q, 'validate')).took?.bid).toBe(bullJobId('validate:j'));
      expect(await bull('validate').getJob(bullJobId('validate:j'))).toBeUndefined();
      const handedAgain =
        notBeforeGrace(await q.claim('w', ['validate'], 60_000), took) ??
        (await claimOnceFree(q, 'w', 'validate', 'the hand-over grace to pass'));
      expect(handedAgain).toMatchObject({ id: 'validate:j', payload: { n: 1 }, attempts: 1 });

      await q.enqueue({ id: 'chunk:j:0', jobId: 'j', kind: 'render-chunk' });
      await q.enqueue({
        id: 'finalize:j',
        jobId: 'j',
        kind: 'finalize',
        payload: { last: true },
        after: ['chunk:j:0'],
      });
      await q.complete((await q.claim('w', ['render-chunk'], 60_000))!.id, 'w');
      const tookJoin = Date.now();
      await takeWithoutHandOver(q, 'finalize');
      const joined =
        notBeforeGrace(await q.claim('w', ['finalize'], 60_000), tookJoin) ??
        (await claimOnceFree(q, 'w', 'finalize', "the freed join's hand-over grace to pass"));
      expect(joined).toMatchObject({ id: 'finalize:j', payload: { last: true } });
    }));

  it('settles a task BullMQ completed but whose settling was lost, once its lease runs out, and frees its join', () =>
    withCrashes(async (q, bull) => {
      await q.enqueue({ id: 'chunk:j:0', jobId: 'j', kind: 'render-chunk' });
      await q.enqueue({ id: 'finalize:j', jobId: 'j', kind: 'finalize', after: ['chunk:j:0'] });
      await q.claim('w', ['render-chunk'], 200);
      // BullMQ's step of complete() went through, the adapter's own step did not.
      await new Job(bull('render-chunk'), 'render-chunk', {}, {}, bullJobId('chunk:j:0')).moveToCompleted(
        null,
        'w',
        false,
      );
      expect(await q.claim('w', ['finalize'], 60_000)).toBeUndefined();
      const freed = await claimOnceFree(q, 'w', 'finalize', 'the lost settling to be made up once the lease runs out');
      expect(freed.id).toBe('finalize:j');
      expect(await q.jobTasks('j')).toMatchObject([
        { id: 'chunk:j:0', state: 'done', attempts: 1 },
        { id: 'finalize:j', state: 'running', attempts: 1 },
      ]);
    }));

  it('hands each of 200 tasks to exactly one of 2 instances x 4 claimers', async () => {
    const prefix = uniquePrefix();
    const [a, b] = await Promise.all([
      BullmqTaskQueue.open({ redisUrl: redisUrl!, prefix }),
      BullmqTaskQueue.open({ redisUrl: redisUrl!, prefix }),
    ]);
    try {
      const ids = Array.from({ length: 200 }, (_, i) => `chunk:job${i % 7}:${i}`);
      for (const id of ids) await a.enqueue({ id, jobId: id.split(':')[1]!, kind: 'render-chunk' });
      const claimed: string[] = [];
      const claimer = async (q: TaskQueue, name: string) => {
        for (;;) {
          const t = await q.claim(name, ['render-chunk'], 60_000);
          if (!t) return;
          claimed.push(t.id);
          await q.complete(t.id, name);
        }
      };
      await Promise.all([a, b].flatMap((q, i) => [0, 1, 2, 3].map((j) => claimer(q, `host${i}/slot${j}`))));
      expect(claimed.length).toBe(200);
      expect([...claimed].sort()).toEqual([...ids].sort());
      expect(await b.counts()).toEqual({ queued: 0, running: 0, done: 200, failed: 0 });
    } finally {
      await Promise.all([a.close(), b.close()]);
      await deletePrefix(prefix, redisUrl);
    }
  });
});

describe.skipIf(!canSpawnRedis)('BullMQ task queue when Redis fails', () => {
  let redis: ThrowawayRedis | undefined;
  let queue: BullmqTaskQueue | undefined;
  afterEach(async () => {
    await queue?.close();
    await redis?.stop();
    queue = redis = undefined;
  });

  /** The queue once it answers again after a restart (it reconnects by itself). */
  const whenBack = async (q: TaskQueue) => {
    const until = Date.now() + 10_000;
    for (;;) {
      try {
        return await q.counts();
      } catch (err) {
        if (Date.now() > until) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  it('keeps every enqueued task, and a join, through a kill -9 of redis-server', async () => {
    redis = await startThrowawayRedis();
    queue = await BullmqTaskQueue.open({ redisUrl: redis.url, prefix: 'rb' });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const kind = ALL_KINDS[i % 3]!;
      ids.push(`${kind}:j${i}`);
      await queue.enqueue({ id: `${kind}:j${i}`, jobId: `j${i}`, kind, payload: { i } });
    }
    await queue.enqueue({ id: 'finalize:j0', jobId: 'j0', kind: 'finalize', after: ['validate:j0', 'render:j1'] });
    await redis.restart('kill');
    await whenBack(queue);
    const seen: string[] = [];
    for (let t = await queue.claim('w', ALL_KINDS, 60_000); t; t = await queue.claim('w', ALL_KINDS, 60_000)) {
      expect(t.payload).toEqual(t.kind === 'finalize' ? {} : { i: Number(t.jobId.slice(1)) });
      seen.push(t.id);
      await queue.complete(t.id, 'w');
    }
    expect(seen.slice(0, -1).sort()).toEqual([...ids].sort());
    expect(seen.at(-1)).toBe('finalize:j0');
  });

  it('lets the holder complete a task claimed before a restart; requeues an abandoned one past its lease', async () => {
    redis = await startThrowawayRedis();
    queue = await BullmqTaskQueue.open({ redisUrl: redis.url, prefix: 'rb' });
    await queue.enqueue({ id: 'kept', jobId: 'j', kind: 'render-chunk' });
    await queue.enqueue({ id: 'abandoned', jobId: 'j', kind: 'render-chunk' });
    expect((await queue.claim('holder', ['render-chunk'], 60_000))?.id).toBe('kept');
    expect((await queue.claim('dies', ['render-chunk'], 300))?.id).toBe('abandoned');
    await redis.restart('kill');
    await whenBack(queue);
    await queue.complete('kept', 'holder');
    const again = await claimOnceFree(queue, 'survivor', 'render-chunk', "the abandoned task's lease to run out");
    expect(again).toMatchObject({ id: 'abandoned', attempts: 2 });
    await queue.complete('abandoned', 'survivor');
    expect(await queue.jobTasks('j')).toEqual([
      { id: 'kept', kind: 'render-chunk', state: 'done', attempts: 1, lastError: null },
      { id: 'abandoned', kind: 'render-chunk', state: 'done', attempts: 2, lastError: null },
    ]);
  });

  it('fails calls within seconds while Redis is down, never showing the password', async () => {
    const password = 'pw-never-shown-7f3a';
    redis = await startThrowawayRedis({ password });
    queue = await BullmqTaskQueue.open({
      redisUrl: redis.url,
      prefix: 'rb',
      commandTimeoutMs: 2000,
      connectTimeoutMs: 2000,
    });
    await queue.enqueue({ id: 'v', jobId: 'j', kind: 'validate' });
    await redis.stop();
    const started = Date.now();
    const err = await queue.claim('w', ['validate'], 60_000).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/BullMQ task queue: claim failed \(Redis at redis:\/\/.*127\.0\.0\.1/);
    expect(err?.message).not.toContain(password);
    expect(Date.now() - started).toBeLessThan(5000);
    const openErr = await BullmqTaskQueue.open({ redisUrl: redis.url, connectTimeoutMs: 1000 }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(openErr?.message).toMatch(/cannot reach Redis at redis:\/\/.*127\.0\.0\.1/);
    expect(openErr?.message).not.toContain(password);
    redis = undefined;
  });
});
