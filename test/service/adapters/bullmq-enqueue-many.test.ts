// The BullMQ task queue's batched enqueue (TaskSubmitter.enqueueMany, enqueue-batch.ts): a planned
// job's tasks go to Redis in one script call per 1,000 tasks, not one per task, and a batch that
// cannot be enqueued whole is not enqueued at all. Its outcome (claim order, tags, dependencies) is
// the conformance suite's (test/service/conformance/task-queue/enqueue-many.ts, run on BullMQ).
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { BullmqTaskQueue } from '../../../service/adapters/bullmq/task-queue.js';
import { enqueueAll } from '../../../service/domain/enqueue-all.js';
import type { EnqueueTask } from '../../../service/ports/tasks.js';
import { waitUntil } from '../../helpers/e2e.js';
import { deletePrefix, requireRedis, uniquePrefix } from '../../helpers/redis.js';

const redisUrl = await requireRedis('the BullMQ batched enqueue tests');
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function openQueue(): Promise<{ queue: BullmqTaskQueue; prefix: string }> {
  const prefix = uniquePrefix();
  const queue = await BullmqTaskQueue.open({ redisUrl: redisUrl!, prefix });
  cleanups.push(async () => (await queue.close(), await deletePrefix(prefix, redisUrl)));
  return { queue, prefix };
}

/** `n` one-frame chunks of `jobId`, then its finalize after all of them. */
function planned(jobId: string, n: number): EnqueueTask[] {
  const chunks = Array.from({ length: n }, (_, i) => ({
    id: `${jobId}:chunk:${i}`,
    jobId,
    kind: 'render-chunk' as const,
    payload: { frames: [i + 1] },
    shareGroup: 'ws/a',
  }));
  return [...chunks, { id: `${jobId}:finalize`, jobId, kind: 'finalize', after: chunks.map((c) => c.id) }];
}

/**
 * The script calls (EVALSHA, or EVAL after a cache miss) on the adapter's own keys under `prefix`
 * while `fn` runs, as Redis's MONITOR saw them; counted once a later command was seen, so none is
 * still on its way.
 */
async function scriptCalls(prefix: string, fn: () => Promise<void>): Promise<number> {
  const client = new Redis(redisUrl!);
  const monitor = await client.monitor();
  const seen: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[]) => seen.push(args));
  try {
    await fn();
    const mark = `${prefix}:done`;
    await client.echo(mark);
    await waitUntil('the MONITOR feed to reach the mark', () => seen.some((a) => a.includes(mark)), {
      intervalMs: 20,
    });
    const own = `${prefix}:tq:`;
    return seen.filter((a) => /^eval(sha)?$/i.test(a[0] ?? '') && a.includes(own)).length;
  } finally {
    monitor.disconnect();
    client.disconnect();
  }
}

describe.skipIf(!redisUrl)('BullMQ enqueueMany', () => {
  it('sends a planned job to Redis in one script call per 1,000 tasks', async () => {
    const { queue, prefix } = await openQueue();
    // Loads the scripts, so that no cache miss adds a call below (tasks of another kind).
    const warm = (id: string): EnqueueTask => ({ id, jobId: 'warm', kind: 'validate' });
    await enqueueAll(queue, [warm('warm:1'), warm('warm:2')]);
    const tasks = planned('job', 1000);
    expect(await scriptCalls(prefix, () => enqueueAll(queue, tasks))).toBe(2);
    const stored = await queue.jobTasks('job');
    expect(stored.map((t) => t.id)).toEqual(tasks.map((t) => t.id));
    expect((await queue.claim('w:1', ['render-chunk'], 60_000))?.id).toBe('job:chunk:0');
    expect(await queue.claim('w:1', ['finalize'], 60_000)).toBeUndefined();
  });

  it('enqueues nothing of a batch with a task it refuses', async () => {
    const { queue } = await openQueue();
    const tasks = planned('bad', 3);
    const refused = [...tasks.slice(0, 2), { ...tasks[2]!, priority: 1.5 }, ...tasks.slice(3)];
    await expect(enqueueAll(queue, refused)).rejects.toThrow('a priority must be an integer (got 1.5)');
    expect(await queue.jobTasks('bad')).toEqual([]);
    expect(await queue.claim('w:1', ['render-chunk'], 60_000)).toBeUndefined();
  });
});
