// WaitingPriority conformance: the read a warm worker makes to decide a preemption. It names the
// task the claim order hands out next (its priority and job) among the kinds asked for, counting
// only tasks claimable now: not those claimed, due later, behind an unfinished task, or paused.
// And the hand-back places: as many for a job as it has tasks waiting, shared by every holder.
import { describe, expect, it } from 'vitest';
import type { TaskLeases, TaskScheduling, TaskSubmitter } from '../../../../service/ports/tasks.js';
import type { WaitingPriority } from '../../../../service/ports/waiting-priority.js';
import { withHarness } from '../with-harness.js';
import type { QueueHarness } from './helpers.js';

type Waiting = TaskSubmitter & TaskLeases & TaskScheduling & WaitingPriority;

export function waitingPriorityConformance(open: () => Promise<QueueHarness<Waiting>>): void {
  describe('WaitingPriority', () => {
    const withQueue = withHarness(open);

    it(
      'names the priority and job of the next claimable task of the kinds asked for',
      withQueue(async ({ queue }: QueueHarness<Waiting>) => {
        expect(await queue.topWaiting(['render-chunk'])).toBeUndefined();
        const chunk = (id: string, jobId: string, priority: number) =>
          queue.enqueue({ id, jobId, kind: 'render-chunk', payload: { frames: [1] }, priority, shareGroup: 'ws/u' });
        await chunk('low-1', 'low', 20);
        await chunk('low-2', 'low', 20);
        // Another kind, above them all: not asked for, not counted.
        await queue.enqueue({ id: 'v', jobId: 'v', kind: 'validate', priority: 99, shareGroup: 'ws/u' });
        expect(await queue.topWaiting(['render-chunk'])).toEqual({ priority: 20, jobId: 'low' });
        expect(await queue.topWaiting(['render-chunk', 'validate'])).toEqual({ priority: 99, jobId: 'v' });

        await chunk('high-1', 'high', 80);
        expect(await queue.topWaiting(['render-chunk'])).toEqual({ priority: 80, jobId: 'high' });
        // A read claims nothing: the claim still takes that task first.
        const first = await queue.claim('w', ['render-chunk'], 60_000);
        expect(first?.id).toBe('high-1');
        // Claimed, it waits no more.
        expect(await queue.topWaiting(['render-chunk'])).toEqual({ priority: 20, jobId: 'low' });
        // Handed back with a delay, it is not claimable yet.
        await queue.release(first!.id, 'w', { delayMs: 60_000 });
        expect(await queue.topWaiting(['render-chunk'])).toEqual({ priority: 20, jobId: 'low' });
      }),
    );

    it(
      "leaves out a paused job's tasks, sees a changed priority, and a handed-back task again",
      withQueue(async ({ queue }: QueueHarness<Waiting>) => {
        const chunk = (id: string, jobId: string, priority: number) =>
          queue.enqueue({ id, jobId, kind: 'render-chunk', payload: { frames: [1] }, priority, shareGroup: 'ws/u' });
        await chunk('a-1', 'a', 30);
        await chunk('b-1', 'b', 60);
        await queue.pauseJob('b');
        expect(await queue.topWaiting(['render-chunk'])).toEqual({ priority: 30, jobId: 'a' });
        await queue.resumeJob('b');
        expect(await queue.topWaiting(['render-chunk'])).toEqual({ priority: 60, jobId: 'b' });
        await queue.setJobPriority('a', 90);
        expect(await queue.topWaiting(['render-chunk'])).toEqual({ priority: 90, jobId: 'a' });
        const a = await queue.claim('w', ['render-chunk'], 60_000);
        expect(a?.id).toBe('a-1');
        expect(await queue.topWaiting(['render-chunk'])).toEqual({ priority: 60, jobId: 'b' });
        // Handed back without a delay (a preemption): claimable again at once.
        await queue.release(a!.id, 'w');
        await expect.poll(() => queue.topWaiting(['render-chunk'])).toEqual({ priority: 90, jobId: 'a' });
      }),
    );

    it(
      'gives a job as many hand-back places as it has tasks waiting, each to one holder until its time',
      withQueue(async ({ queue }: QueueHarness<Waiting>) => {
        const kinds = ['render-chunk'] as const;
        expect(await queue.takeHandBackPlace('none', kinds, 'a/cpu-0', 60_000)).toBe(false);
        const chunk = (id: string) =>
          queue.enqueue({ id, jobId: 'high', kind: 'render-chunk', payload: { frames: [1] }, priority: 90 });
        await chunk('high-1');
        expect(await queue.takeHandBackPlace('high', kinds, 'a/cpu-0', 60_000)).toBe(true);
        // One task waits: one place, which another holder cannot take, and its holder keeps.
        expect(await queue.takeHandBackPlace('high', kinds, 'b/cpu-0', 60_000)).toBe(false);
        expect(await queue.takeHandBackPlace('high', kinds, 'a/cpu-0', 60_000)).toBe(true);
        // Tasks of other kinds make no place.
        expect(await queue.takeHandBackPlace('high', ['validate'], 'b/cpu-0', 60_000)).toBe(false);
        await chunk('high-2');
        expect(await queue.takeHandBackPlace('high', kinds, 'b/cpu-0', 60_000)).toBe(true);
        expect(await queue.takeHandBackPlace('high', kinds, 'c/cpu-0', 60_000)).toBe(false);
        // A place whose time ran out is free again.
        await chunk('high-3');
        expect(await queue.takeHandBackPlace('high', kinds, 'c/cpu-0', 1)).toBe(true);
        await expect.poll(() => queue.takeHandBackPlace('high', kinds, 'd/cpu-0', 60_000)).toBe(true);
        // Claimed, a task waits no more, and its place goes with it.
        for (let i = 0; i < 3; i++) await queue.claim('w', kinds, 60_000);
        expect(await queue.takeHandBackPlace('high', kinds, 'a/cpu-0', 60_000)).toBe(false);
      }),
    );
  });
}
