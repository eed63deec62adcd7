// Hand-backs without delay (a preemption's or a lost GPU's release, a retry without back-off) on
// every stack: the task goes back to its place in the claim order (priority, then fair-share tag,
// then enqueue order), kept from its submit, as the SQL queues claim it by its stored priority, tag
// and seq. It is not claimed ahead of tasks the order puts first, nor in the order it was handed
// back (BullMQ once fetched such a task first, before the whole order, from its own wait list).
import { describe, expect, it } from 'vitest';
import type { TaskLeases, TaskSubmitter } from '../../../../service/ports/tasks.js';
import { waitUntil } from '../../../helpers/e2e.js';
import { withHarness } from '../with-harness.js';
import type { QueueHarness } from './helpers.js';

type HandBacks = TaskSubmitter & TaskLeases;

const KINDS = ['render', 'render-chunk'] as const;

/** Enqueues `n` one-frame chunks of `jobId` (ids `<jobId>-<i>`), in order. */
async function chunks(
  queue: TaskSubmitter,
  jobId: string,
  n: number,
  opts: { priority?: number; shareGroup?: string },
) {
  for (let i = 0; i < n; i++)
    await queue.enqueue({ id: `${jobId}-${i}`, jobId, kind: 'render-chunk', payload: { frames: [i] }, ...opts });
}

/** Claims until the queue runs dry; the ids in claim order. */
async function drain(queue: TaskLeases, worker = 'w9'): Promise<string[]> {
  const out: string[] = [];
  for (let t = await queue.claim(worker, KINDS, 60_000); t; t = await queue.claim(worker, KINDS, 60_000))
    out.push(t.id);
  return out;
}

/** The two ways a holder hands a task back at once. */
const handBacks = {
  release: (queue: TaskLeases, id: string, worker: string) => queue.release(id, worker),
  retry: (queue: TaskLeases, id: string, worker: string) =>
    queue.fail(id, worker, { retryable: true, message: 'Blender crashed (signal 9)' }),
} as const;

/** Short enough to wait out, long enough for the higher priority's enqueues to land within it. */
const DELAY_MS = 300;

/** The two ways a holder hands a task back with a delay. */
const delayedHandBacks = {
  release: (queue: TaskLeases, id: string, worker: string) => queue.release(id, worker, { delayMs: DELAY_MS }),
  retry: (queue: TaskLeases, id: string, worker: string) =>
    queue.fail(id, worker, { retryable: true, message: 'Blender crashed (signal 9)', retryAfterMs: DELAY_MS }),
} as const;

export function handBackConformance(open: () => Promise<QueueHarness<HandBacks>>): void {
  describe('Hand-backs without delay', () => {
    const withQueue = withHarness(open);

    for (const [how, handBack] of Object.entries(handBacks)) {
      it(
        `claims a task handed back by a ${how} after a higher priority's tasks queued meanwhile`,
        withQueue(async ({ queue }: QueueHarness<HandBacks>) => {
          await chunks(queue, 'low', 2, { shareGroup: 'ws1/u' });
          expect((await queue.claim('w1', KINDS, 60_000))?.id).toBe('low-0');
          await chunks(queue, 'high', 2, { priority: 5, shareGroup: 'ws2/u' });
          await handBack(queue, 'low-0', 'w1');
          // Still ahead of its own job's later task, behind the higher priority.
          expect(await drain(queue)).toEqual(['high-0', 'high-1', 'low-0', 'low-1']);
        }),
      );

      it(
        `claims tasks handed back by a ${how} by their priorities, not in the order they came back`,
        withQueue(async ({ queue }: QueueHarness<HandBacks>) => {
          await chunks(queue, 'bg', 2, { shareGroup: 'ws0/u' });
          for (const p of [1, 2, 3]) await chunks(queue, `p${p}`, 1, { priority: p, shareGroup: `ws${p}/u` });
          const first = [];
          for (const w of ['w1', 'w2', 'w3']) first.push((await queue.claim(w, KINDS, 60_000))?.id);
          expect(first).toEqual(['p3-0', 'p2-0', 'p1-0']);
          // Handed back last first.
          await handBack(queue, 'p1-0', 'w3');
          await handBack(queue, 'p2-0', 'w2');
          await handBack(queue, 'p3-0', 'w1');
          expect(await drain(queue)).toEqual(['p3-0', 'p2-0', 'p1-0', 'bg-0', 'bg-1']);
        }),
      );
    }

    // Releases only: a retry charges the attempt's slot time to its group, which may rescale the
    // group's queued tags (share-tags.ts); a release leaves every tag as it was.
    it(
      'claims tasks released without delay by their fair-share tags, not in the order they came back',
      withQueue(async ({ queue }: QueueHarness<HandBacks>) => {
        // Tags of one-frame tasks, two groups with one weight each: a-0 1, a-1 2, a-2 3 and b-0 2,
        // b-1 3, b-2 4 (b's start at the queue's head, a-0's). Equal tags go in enqueue order.
        await chunks(queue, 'a', 3, { shareGroup: 'ws1/u' });
        await chunks(queue, 'b', 3, { shareGroup: 'ws2/u' });
        const first = [];
        for (const w of ['w1', 'w2', 'w3']) first.push((await queue.claim(w, KINDS, 60_000))?.id);
        expect(first).toEqual(['a-0', 'a-1', 'b-0']);
        // Handed back last first: the order puts them back where they were.
        await queue.release('b-0', 'w3');
        await queue.release('a-1', 'w2');
        await queue.release('a-0', 'w1');
        expect(await drain(queue)).toEqual(['a-0', 'a-1', 'b-0', 'a-2', 'b-1', 'b-2']);
      }),
    );

    it(
      'claims a released render task among render chunks by its place, not first',
      withQueue(async ({ queue }: QueueHarness<HandBacks>) => {
        await queue.enqueue({ id: 'plan', jobId: 'plan', kind: 'render', priority: 1, shareGroup: 'ws1/u' });
        expect((await queue.claim('w1', KINDS, 60_000))?.id).toBe('plan');
        await chunks(queue, 'urgent', 2, { priority: 3, shareGroup: 'ws2/u' });
        await chunks(queue, 'bg', 2, { shareGroup: 'ws2/u' });
        await queue.release('plan', 'w1');
        expect(await drain(queue)).toEqual(['urgent-0', 'urgent-1', 'plan', 'bg-0', 'bg-1']);
      }),
    );
  });

  // Once its delay runs out, a task handed back with one is claimed at its place in the order, as the
  // SQL queues claim it once run_after passes (BullMQ once fetched it first, from its delayed set).
  describe('Hand-backs with a delay', () => {
    const withQueue = withHarness(open);

    for (const [how, handBack] of Object.entries(delayedHandBacks)) {
      it(
        `claims a task handed back by a ${how} with a delay, once due, behind a higher priority queued meanwhile`,
        withQueue(async ({ queue }: QueueHarness<HandBacks>) => {
          await chunks(queue, 'low', 2, { shareGroup: 'ws1/u' });
          await queue.enqueue({ id: 'probe', jobId: 'probe', kind: 'finalize', shareGroup: 'ws3/u' });
          expect((await queue.claim('w1', KINDS, 60_000))?.id).toBe('low-0');
          expect((await queue.claim('w2', ['finalize'], 60_000))?.id).toBe('probe');
          await handBack(queue, 'low-0', 'w1');
          // Handed back the same way just after: once it can be claimed, low-0's delay ran out too.
          await handBack(queue, 'probe', 'w2');
          await chunks(queue, 'high', 2, { priority: 5, shareGroup: 'ws2/u' });
          await waitUntil('the probe to be due', () => queue.claim('w2', ['finalize'], 60_000), {
            timeoutMs: 15_000,
            intervalMs: 10,
          });
          expect(await drain(queue)).toEqual(['high-0', 'high-1', 'low-0', 'low-1']);
        }),
      );
    }
  });
}
