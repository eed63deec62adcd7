// TaskScheduling and ShareWeights conformance: the claim order (strict priority, then weighted fair
// share between the groups waiting, then enqueue order), a job's priority changed while it waits,
// pause and resume, and the operator's weights kept with the queue. Claims stand in for workers.
import { describe, expect, it } from 'vitest';
import type { QueueHousekeeping, TaskLeases, TaskScheduling, TaskSubmitter } from '../../../../service/ports/tasks.js';
import type { ShareWeights } from '../../../../service/ports/share-weights.js';
import { withHarness } from '../with-harness.js';
import type { QueueHarness } from './helpers.js';

type Scheduled = TaskSubmitter & TaskLeases & TaskScheduling & ShareWeights & Pick<QueueHousekeeping, 'jobTasks'>;

/** Enqueues `n` one-frame chunks of `jobId` (ids `<jobId>-<i>`), in order. */
async function chunks(
  queue: TaskSubmitter,
  jobId: string,
  n: number,
  opts: { priority?: number; shareGroup?: string } = {},
): Promise<void> {
  for (let i = 0; i < n; i++)
    await queue.enqueue({ id: `${jobId}-${i}`, jobId, kind: 'render-chunk', payload: { frames: [i] }, ...opts });
}

/** Claims `n` tasks (fewer when the queue runs dry) and returns their job ids in claim order. */
async function claimJobs(queue: TaskLeases, n: number, worker = 'w'): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const t = await queue.claim(worker, ['render-chunk'], 60_000);
    if (!t) break;
    out.push(t.jobId);
  }
  return out;
}

const count = (ids: string[], jobId: string) => ids.filter((j) => j === jobId).length;

export function taskSchedulingConformance(open: () => Promise<QueueHarness<Scheduled>>): void {
  describe('TaskScheduling', () => {
    const withQueue = withHarness(open);

    it(
      "claims a higher priority's tasks first, whenever they came",
      withQueue(async ({ queue }: QueueHarness<Scheduled>) => {
        await chunks(queue, 'low', 3);
        await chunks(queue, 'high', 2, { priority: 5 });
        await chunks(queue, 'lower', 1, { priority: -1 });
        expect(await claimJobs(queue, 7)).toEqual(['high', 'high', 'low', 'low', 'low', 'lower']);
      }),
    );

    it(
      "moves a waiting job's tasks, and those it enqueues later, to its new priority",
      withQueue(async ({ queue }: QueueHarness<Scheduled>) => {
        await chunks(queue, 'a', 2);
        await queue.enqueue({ id: 'b-0', jobId: 'b', kind: 'render-chunk', payload: { frames: [0] } });
        expect(await queue.setJobPriority('b', 3)).toBe(1);
        // A later enqueue naming the old priority (a worker planning the job's chunks) keeps the job's.
        await queue.enqueue({ id: 'b-1', jobId: 'b', kind: 'render-chunk', payload: { frames: [1] }, priority: 0 });
        expect(await claimJobs(queue, 5)).toEqual(['b', 'b', 'a', 'a']);
      }),
    );

    it(
      'claims nothing of a paused job, lets its running task finish, and restores its order on resume',
      withQueue(async ({ queue }: QueueHarness<Scheduled>) => {
        await chunks(queue, 'p', 3);
        const running = await queue.claim('w1', ['render-chunk'], 60_000);
        expect(running?.id).toBe('p-0');
        expect(await queue.pauseJob('p')).toBe(2);
        await queue.enqueue({ id: 'p-late', jobId: 'p', kind: 'render-chunk', payload: { frames: [9] } });
        await chunks(queue, 'other', 1);
        expect(await claimJobs(queue, 3)).toEqual(['other']);
        // Held tasks are still queued, as the port sees them; the running one finishes.
        const states = Object.fromEntries((await queue.jobTasks('p')).map((t) => [t.id, t.state]));
        expect(states).toEqual({ 'p-0': 'running', 'p-1': 'queued', 'p-2': 'queued', 'p-late': 'queued' });
        await queue.fail('p-0', 'w1', { retryable: true, message: 'crash' });
        expect(await queue.claim('w2', ['render-chunk'], 60_000)).toBeUndefined();
        expect(await queue.resumeJob('p')).toBe(4);
        const order: string[] = [];
        for (
          let t = await queue.claim('w', ['render-chunk'], 60_000);
          t;
          t = await queue.claim('w', ['render-chunk'], 60_000)
        )
          order.push(t.id);
        expect(order).toEqual(['p-0', 'p-1', 'p-2', 'p-late']);
      }),
    );

    it(
      'shares claims between waiting groups by weight',
      withQueue(async ({ queue }: QueueHarness<Scheduled>) => {
        await queue.setShareWeight('ws-one', 1);
        await queue.setShareWeight('ws-two', 2);
        await chunks(queue, 'one', 40, { shareGroup: 'ws-one' });
        await chunks(queue, 'two', 40, { shareGroup: 'ws-two' });
        const first = await claimJobs(queue, 30);
        expect(count(first, 'one')).toBeGreaterThanOrEqual(9);
        expect(count(first, 'one')).toBeLessThanOrEqual(11);
        expect(count(first, 'two')).toBeGreaterThanOrEqual(19);
      }),
    );

    it(
      'does not starve a group that starts waiting behind a big backlog',
      withQueue(async ({ queue }: QueueHarness<Scheduled>) => {
        await chunks(queue, 'big', 200, { shareGroup: 'ws-big/alice' });
        expect(count(await claimJobs(queue, 20), 'big')).toBe(20);
        await chunks(queue, 'new', 10, { shareGroup: 'ws-new/bob' });
        const next = await claimJobs(queue, 10);
        expect(count(next, 'new')).toBeGreaterThanOrEqual(4);
        // Nor is the backlog's group starved in turn: the newcomer starts level, not owed the past.
        expect(count(next, 'big')).toBeGreaterThanOrEqual(4);
      }),
    );

    it(
      "moves a waiting backlog's share as soon as its weight changes, a workspace's submitters too",
      withQueue(async ({ queue }: QueueHarness<Scheduled>) => {
        await chunks(queue, 'grown', 60, { shareGroup: 'ws-grown/ann' });
        await chunks(queue, 'same', 60, { shareGroup: 'ws-same/bob' });
        // Tagged at 1:1 when enqueued (the second group starts level with the first's head, one frame
        // behind); the operator then gives ws-grown three times the weight.
        const before = count(await claimJobs(queue, 10), 'grown');
        expect(before).toBeGreaterThanOrEqual(5);
        expect(before).toBeLessThanOrEqual(6);
        await queue.setShareWeight('ws-grown', 3);
        const next = await claimJobs(queue, 40);
        expect(count(next, 'grown')).toBeGreaterThanOrEqual(28);
        expect(count(next, 'grown')).toBeLessThanOrEqual(32);
        // And back: the same weight again moves nothing, a lower one gives the other group its due.
        await queue.setShareWeight('ws-grown', 3);
        await queue.setShareWeight('ws-grown', 1);
        const last = await claimJobs(queue, 20);
        expect(count(last, 'grown')).toBeGreaterThanOrEqual(8);
        expect(count(last, 'grown')).toBeLessThanOrEqual(12);
      }),
    );

    it(
      "divides a workspace's weight between its submitters waiting",
      withQueue(async ({ queue }: QueueHarness<Scheduled>) => {
        await chunks(queue, 'solo', 60, { shareGroup: 'ws-a/ann' });
        await chunks(queue, 'pair-1', 30, { shareGroup: 'ws-b/bea' });
        await chunks(queue, 'pair-2', 30, { shareGroup: 'ws-b/bob' });
        const first = await claimJobs(queue, 40);
        expect(count(first, 'solo')).toBeGreaterThanOrEqual(16);
        expect(count(first, 'solo')).toBeLessThanOrEqual(24);
      }),
    );
  });

  describe('ShareWeights', () => {
    const withQueue = withHarness(open);

    it(
      'keeps the weights with the queue, and refuses one that is not positive',
      withQueue(async ({ queue, reopen }: QueueHarness<Scheduled>) => {
        expect(await queue.shareWeights()).toEqual({});
        await queue.setShareWeight('ws_1', 2);
        await queue.setShareWeight('ws_1/alice', 0.5);
        await queue.setShareWeight('ws_1', 3);
        await expect(queue.setShareWeight('ws_2', 0)).rejects.toThrow(/positive/);
        expect(await (await reopen()).shareWeights()).toEqual({ ws_1: 3, 'ws_1/alice': 0.5 });
      }),
    );
  });
}
