// DependencyWakes conformance (ports/dependency-waits.ts): a planning task released waiting for
// other jobs is not claimable until one of them ends, and is claimable at once when it does, not
// at its safety delay (the worker's DEPENDENCY_SAFETY_POLL_MS, 30 s, longer than any deadline
// here); a job that ended before the release names it; the wait across a restart and between
// processes. Claims stand in for workers.
import { describe, expect, it } from 'vitest';
import type { DependencyWakes } from '../../../../service/ports/dependency-waits.js';
import type { QueueHousekeeping, Task, TaskLeases, TaskSubmitter } from '../../../../service/ports/tasks.js';
import { DEPENDENCY_SAFETY_POLL_MS } from '../../../../service/worker/render/dependency-wait.js';
import { waitUntil } from '../../../helpers/e2e.js';
import { withHarness } from '../with-harness.js';
import type { QueueHarness } from './helpers.js';

type Waits = TaskSubmitter & TaskLeases & DependencyWakes & Pick<QueueHousekeeping, 'jobTasks'>;

/** Well under the safety delay: a claim that succeeds within it was woken, not timed out. */
const WOKEN_WITHIN_MS = 10_000;

/** Another job's queued tasks, enough that "behind them" and "ahead of them" differ. */
const BACKLOG = 8;

/** Enqueues job `jobId`'s planning task, claims it as `worker` and releases it waiting for `waitFor`. */
async function deferred(queue: Waits, jobId: string, waitFor: string[], worker = 'w1'): Promise<string> {
  const id = `plan-${jobId}`;
  await queue.enqueue({ id, jobId, kind: 'render' });
  const t = await queue.claim(worker, ['render'], 60_000);
  expect(t?.id).toBe(id);
  await queue.release(id, worker, { delayMs: DEPENDENCY_SAFETY_POLL_MS, waitFor });
  return id;
}

/** Polls claims until one succeeds, within WOKEN_WITHIN_MS. */
function claimSoon(queue: Waits, worker = 'w2'): Promise<Task> {
  return waitUntil('the woken task to be claimable', () => queue.claim(worker, ['render'], 60_000), {
    timeoutMs: WOKEN_WITHIN_MS,
    intervalMs: 20,
  });
}

export function dependencyWakesConformance(open: () => Promise<QueueHarness<Waits>>): void {
  describe('DependencyWakes', () => {
    const withQueue = withHarness(open);

    it('the safety delay is far longer than the deadline these tests wait for a wake', () => {
      expect(DEPENDENCY_SAFETY_POLL_MS).toBe(30_000);
      expect(WOKEN_WITHIN_MS * 3).toBeLessThanOrEqual(DEPENDENCY_SAFETY_POLL_MS);
    });

    it(
      'holds a task waiting for a job until that job ends, then hands it out at once',
      withQueue(async ({ queue }: QueueHarness<Waits>) => {
        const id = await deferred(queue, 'comp', ['shot']);
        expect(await queue.claim('w2', ['render'], 60_000)).toBeUndefined();
        expect((await queue.jobTasks('comp')).map((t) => t.state)).toEqual(['queued']);
        // Another job's end is not this one's.
        await queue.jobEnded('unrelated');
        expect(await queue.claim('w2', ['render'], 60_000)).toBeUndefined();
        await queue.jobEnded('shot');
        const t = await claimSoon(queue);
        expect(t.id).toBe(id);
        // The release did not count as an attempt: the wait spends no retries.
        expect(t.attempts).toBe(1);
      }),
    );

    it(
      'wakes a task when any one of the jobs it waits for ends, and every task waiting for it',
      withQueue(async ({ queue }: QueueHarness<Waits>) => {
        await deferred(queue, 'a', ['x', 'y']);
        await deferred(queue, 'b', ['y']);
        await queue.jobEnded('y');
        const first = await claimSoon(queue);
        const second = await claimSoon(queue);
        expect([first.jobId, second.jobId].sort()).toEqual(['a', 'b']);
      }),
    );

    it(
      'hands out at once a task released waiting for a job that ended before the release',
      withQueue(async ({ queue }: QueueHarness<Waits>) => {
        await queue.enqueue({ id: 'plan-late', jobId: 'late', kind: 'render' });
        const t = await queue.claim('w1', ['render'], 60_000);
        expect(t?.id).toBe('plan-late');
        // The worker read 'dep' as unfinished; it ends (and wakes nothing) before the release lands.
        await queue.jobEnded('dep');
        await queue.release('plan-late', 'w1', { delayMs: DEPENDENCY_SAFETY_POLL_MS, waitFor: ['other', 'dep'] });
        expect((await claimSoon(queue)).id).toBe('plan-late');
      }),
    );

    // The order rule on every stack: a woken task keeps its place in the claim order (priority,
    // then fair-share tag, then enqueue order) from its submit, as the SQL queues claim it by its
    // stored tag and seq. Submitted before another job's backlog of equal priority, it is claimed
    // before that backlog, not behind it (BullMQ once fetched it after every backlog task).
    for (const kind of ['render', 'render-chunk'] as const) {
      it(
        `claims a woken task ahead of a ${kind} backlog of another job submitted after it`,
        withQueue(async ({ queue }: QueueHarness<Waits>) => {
          const id = await deferred(queue, 'comp', ['shot']);
          for (let i = 0; i < BACKLOG; i++)
            await queue.enqueue({ id: `bg-${i}`, jobId: 'bg', kind, payload: { frames: [i] } });
          const kinds = ['render', 'render-chunk'] as const;
          // Before the wake the backlog runs: its first task, not the waiting one.
          expect((await queue.claim('w2', kinds, 60_000))?.id).toBe('bg-0');
          await queue.jobEnded('shot');
          expect((await queue.claim('w3', kinds, 60_000))?.id).toBe(id);
          expect((await queue.claim('w4', kinds, 60_000))?.id).toBe('bg-1');
        }),
      );
    }

    it(
      'claims a woken task at its place after a task handed back without delay ran first',
      withQueue(async ({ queue }: QueueHarness<Waits>) => {
        const id = await deferred(queue, 'comp', ['shot']);
        await queue.enqueue({ id: 'again', jobId: 'again', kind: 'render' });
        expect((await queue.claim('w2', ['render'], 60_000))?.id).toBe('again');
        await queue.release('again', 'w2');
        for (let i = 0; i < BACKLOG; i++)
          await queue.enqueue({ id: `bg-${i}`, jobId: 'bg', kind: 'render-chunk', payload: { frames: [i] } });
        const kinds = ['render', 'render-chunk'] as const;
        // Handed back, it comes first again; the claim that took it must leave the backlog in order.
        expect((await queue.claim('w3', kinds, 60_000))?.id).toBe('again');
        await queue.jobEnded('shot');
        expect((await queue.claim('w4', kinds, 60_000))?.id).toBe(id);
        expect((await queue.claim('w5', kinds, 60_000))?.id).toBe('bg-0');
      }),
    );

    it(
      'keeps the wait across a restart',
      withQueue(async ({ queue, reopen }: QueueHarness<Waits>) => {
        const id = await deferred(queue, 'after', ['before']);
        const again = await reopen();
        expect(await again.claim('w2', ['render'], 60_000)).toBeUndefined();
        await again.jobEnded('before');
        expect((await claimSoon(again)).id).toBe(id);
      }),
    );

    it(
      "wakes the task when another process that shares the queue records the job's end",
      withQueue(async ({ queue, other }: QueueHarness<Waits>) => {
        const elsewhere = other ? await other() : queue;
        const id = await deferred(queue, 'here', ['there']);
        expect(await queue.claim('w2', ['render'], 60_000)).toBeUndefined();
        await elsewhere.jobEnded('there');
        expect((await claimSoon(queue)).id).toBe(id);
      }),
    );
  });
}
