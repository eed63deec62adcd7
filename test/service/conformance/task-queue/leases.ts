// TaskLeases conformance: what a worker relies on when it claims tasks, keeps their leases and
// reports how they ended. Tasks come in through enqueue (TaskSubmitter); some tests read the
// outcome back through jobTasks and counts (QueueHousekeeping).
import { describe, expect, it } from 'vitest';
import type { QueueHousekeeping, TaskKind, TaskLeases, TaskSubmitter } from '../../../../service/ports/tasks.js';
import { waitUntil } from '../../../helpers/e2e.js';
import { withHarness } from '../with-harness.js';
import type { QueueHarness } from './helpers.js';

type Claimable = TaskSubmitter & TaskLeases;
type Observed = Claimable & Pick<QueueHousekeeping, 'jobTasks' | 'counts'>;

/** Claims until nothing is left, one task at a time; returns the ids in claim order. */
async function drain(queue: TaskLeases, workerId: string): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const task = await queue.claim(workerId, ['render-chunk'], 60_000);
    if (!task) return ids;
    ids.push(task.id);
  }
}

export function taskLeasesConformance(name: string, open: () => Promise<QueueHarness<Observed>>): void {
  describe('TaskLeases', () => {
    const withQueue = withHarness(open);

    it(
      'hands tasks out oldest first, each to one worker, and ignores a repeated id',
      withQueue(async ({ queue }: QueueHarness<Claimable>) => {
        await queue.enqueue({ id: 'a', jobId: 'j1', kind: 'validate' });
        await queue.enqueue({ id: 'b', jobId: 'j2', kind: 'validate', payload: { n: 2 } });
        await queue.enqueue({ id: 'a', jobId: 'j1', kind: 'validate' });
        const t1 = await queue.claim('w1', ['validate'], 60_000);
        const t2 = await queue.claim('w2', ['validate'], 60_000);
        expect([t1?.id, t2?.id]).toEqual(['a', 'b']);
        expect(t2?.payload).toEqual({ n: 2 });
        expect(t1?.attempts).toBe(1);
        expect(await queue.claim('w3', ['validate'], 60_000)).toBeUndefined();
      }),
    );

    it(
      'takes a released task back without counting the attempt, from its lease holder only',
      withQueue(async ({ queue }: QueueHarness<Observed>) => {
        await queue.enqueue({ id: 't', jobId: 'j', kind: 'render-chunk' });
        const first = await queue.claim('w1', ['render-chunk'], 60_000);
        expect(first?.attempts).toBe(1);
        await queue.release('t', 'someone-else');
        expect(await queue.claim('w2', ['render-chunk'], 60_000)).toBeUndefined();
        await queue.release('t', 'w1');
        const again = await queue.claim('w2', ['render-chunk'], 60_000);
        expect(again?.attempts).toBe(1);
        expect((await queue.jobTasks('j'))[0]).toMatchObject({ state: 'running', attempts: 1 });
      }),
    );

    it(
      'claims only the kinds asked for',
      withQueue(async ({ queue }: QueueHarness<Claimable>) => {
        await queue.enqueue({ id: 'r', jobId: 'j', kind: 'render' });
        expect(await queue.claim('w', ['validate'], 60_000)).toBeUndefined();
        expect((await queue.claim('w', ['render', 'validate'], 60_000))?.id).toBe('r');
      }),
    );

    it(
      'gives a task back when its lease runs out, and only the lease holder may finish it',
      withQueue(async ({ queue }: QueueHarness<Observed>) => {
        await queue.enqueue({ id: 't', jobId: 'j', kind: 'render-chunk' });
        const first = await queue.claim('dead-worker', ['render-chunk'], 50);
        expect(first?.attempts).toBe(1);
        // Claimed again once the 50 ms lease has run out, however long that takes a busy machine to see.
        const second = await waitUntil(
          'the expired lease to free the task',
          () => queue.claim('live-worker', ['render-chunk'], 60_000),
          { timeoutMs: 15_000, intervalMs: 10 },
        );
        expect(second?.id).toBe('t');
        expect(second?.attempts).toBe(2);
        await queue.complete('t', 'dead-worker');
        expect((await queue.counts()).running).toBe(1);
        expect(await queue.extendLease('t', 'dead-worker', 60_000)).toBe(false);
        expect(await queue.extendLease('t', 'live-worker', 60_000)).toBe(true);
        await queue.complete('t', 'live-worker');
        expect(await queue.counts()).toMatchObject({ running: 0, done: 1 });
      }),
    );

    it(
      're-queues retryable failures after their delay and ends fatal ones',
      withQueue(async ({ queue }: QueueHarness<Observed>) => {
        await queue.enqueue({ id: 'r', jobId: 'j', kind: 'render-chunk' });
        await queue.enqueue({ id: 'f', jobId: 'j', kind: 'finalize' });
        const r = await queue.claim('w', ['render-chunk'], 60_000);
        await queue.fail(r!.id, 'w', { retryable: true, message: 'blender crashed', retryAfterMs: 100 });
        expect(await queue.claim('w', ['render-chunk'], 60_000)).toBeUndefined();
        const retried = await waitUntil('the retry delay to pass', () => queue.claim('w', ['render-chunk'], 60_000), {
          timeoutMs: 15_000,
          intervalMs: 10,
        });
        expect(retried.attempts).toBe(2);
        const f = await queue.claim('w', ['finalize'], 60_000);
        await queue.fail(f!.id, 'w', { retryable: false, message: 'corrupt output' });
        expect(await queue.claim('w', ['finalize'], 60_000)).toBeUndefined();
        expect((await queue.counts()).failed).toBe(1);
      }),
    );

    it(
      'holds a released task back for the delay asked for',
      withQueue(async ({ queue }: QueueHarness<Claimable>) => {
        await queue.enqueue({ id: 'later', jobId: 'j', kind: 'render-chunk' });
        await queue.claim('wrong-gpu', ['render-chunk'], 60_000);
        await queue.release('later', 'wrong-gpu', { delayMs: 150 });
        expect(await queue.claim('other', ['render-chunk'], 60_000)).toBeUndefined();
        const later = await waitUntil(
          'the release delay to pass',
          () => queue.claim('other', ['render-chunk'], 60_000),
          { timeoutMs: 15_000, intervalMs: 10 },
        );
        expect(later).toMatchObject({ id: 'later', attempts: 1 });
      }),
    );

    it(
      'finds at once a task that another handle enqueued or freed after a claim found nothing',
      withQueue(async (h: QueueHarness<Observed>) => {
        const second = h.other ? await h.other() : h.queue;
        // An empty claim may be remembered (SQLite); what another process writes must undo that.
        expect(await h.queue.claim('idle', ['render-chunk'], 60_000)).toBeUndefined();
        await second.enqueue({ id: 'from-other', jobId: 'j', kind: 'render-chunk' });
        expect((await h.queue.claim('idle', ['render-chunk'], 60_000))?.id).toBe('from-other');
        await second.enqueue({ id: 'first', jobId: 'k', kind: 'validate' });
        await second.enqueue({ id: 'then', jobId: 'k', kind: 'render-chunk', after: ['first'] });
        expect(await h.queue.claim('idle', ['render-chunk'], 60_000)).toBeUndefined();
        expect((await second.claim('other', ['validate'], 60_000))?.id).toBe('first');
        expect(await h.queue.claim('idle', ['render-chunk'], 60_000)).toBeUndefined();
        await second.complete('first', 'other');
        expect((await h.queue.claim('idle', ['render-chunk'], 60_000))?.id).toBe('then');
      }),
    );

    it(
      'hands each task to one claimer when eight claim at once (from two handles where the adapter has them)',
      withQueue(async (h: QueueHarness<Observed>) => {
        const ids = Array.from({ length: 200 }, (_, i) => `c${i}`);
        for (const id of ids) await h.queue.enqueue({ id, jobId: 'many', kind: 'render-chunk' });
        const second = h.other ? await h.other() : h.queue;
        // Four claimers per handle, as two worker processes with four slots each; any claim that
        // fails (e.g. "database is locked") fails the test through Promise.all.
        const handles = [h.queue, h.queue, h.queue, h.queue, second, second, second, second];
        const claimed = (await Promise.all(handles.map((q, i) => drain(q, `w${i}`)))).flat();
        expect(claimed).toHaveLength(ids.length);
        expect(new Set(claimed)).toEqual(new Set(ids));
        // Each was leased once: a second lease would have counted a second attempt.
        const tasks = await h.queue.jobTasks('many');
        expect(tasks.filter((t) => t.state === 'running' && t.attempts === 1)).toHaveLength(ids.length);
      }),
    );

    it(
      'tells idle claimers of every handle at once when a task becomes claimable, where the adapter can',
      withQueue(async (h: QueueHarness<Claimable>) => {
        if (!h.queue.onReady) {
          console.log(`${name}: no ready signal across processes; idle claimers find tasks by polling`);
          return;
        }
        const second = h.other ? await h.other() : h.queue;
        const heard: TaskKind[] = [];
        // Wakes the waits below as soon as the signal they wait for comes (no fixed pauses).
        let wake: (() => void) | undefined;
        const off = h.queue.onReady((kind) => {
          heard.push(kind);
          wake?.();
        });
        // A second listener that stays: the barrier proving a signal reached this process (see the end).
        const barrier: TaskKind[] = [];
        const offBarrier = h.queue.onReady((kind) => {
          barrier.push(kind);
          wake?.();
        });
        /**
         * Resolves once `done()` holds, re-checked on every signal; throws after `withinMs`
         * (generous: a busy CI machine).
         */
        const signalled = async (what: string, done: () => boolean, withinMs = 15_000) => {
          const deadline = Date.now() + withinMs;
          while (!done()) {
            const left = deadline - Date.now();
            if (left <= 0) throw new Error(`${what}: nothing within ${withinMs} ms (heard ${JSON.stringify(heard)})`);
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, left);
              wake = () => {
                clearTimeout(timer);
                resolve();
              };
            });
            wake = undefined;
          }
        };
        const hears = async (what: string, kind: TaskKind, act?: () => Promise<void>) => {
          heard.length = 0;
          await act?.();
          await signalled(`a ${kind} signal after ${what}`, () => heard.includes(kind));
        };
        // The listener connects in the background: probe until it hears (a signal before that is lost,
        // by design). Each probe waits for its own signal a while, then sends another.
        for (let i = 0; !heard.includes('validate'); i++) {
          if (i >= 30) throw new Error('the ready listener heard nothing after 30 probing enqueues');
          await second.enqueue({ id: `probe-${i}`, jobId: 'probe', kind: 'validate' });
          await signalled('a probe', () => heard.includes('validate'), 500).catch(() => undefined);
        }

        // Another process enqueues: this one hears it within moments, not at its next poll.
        const t0 = Date.now();
        await hears('an enqueue on another handle', 'render-chunk', () =>
          second.enqueue({ id: 's-chunk', jobId: 's', kind: 'render-chunk' }),
        );
        // Generous for a busy 2-core machine, yet far below a signal held back by a broken coalescing window.
        expect(Date.now() - t0).toBeLessThan(5_000);
        // (A task freed by the tasks it waited for needs no signal: the worker that completed the
        // last of them claims it with its own idle lanes, see WorkerRuntime.)
        await second.enqueue({ id: 's-final', jobId: 's', kind: 'finalize', after: ['s-chunk'] });
        const chunk = await h.queue.claim('w1', ['render-chunk'], 60_000);
        expect(chunk?.id).toBe('s-chunk');
        await h.queue.complete('s-chunk', 'w1');
        // A task handed back for others at once is announced again.
        const fin = await second.claim('w2', ['finalize'], 60_000);
        expect(fin?.id).toBe('s-final');
        await hears('a release without delay', 'finalize', () => second.release('s-final', 'w2'));

        off();
        heard.length = 0;
        barrier.length = 0;
        await second.enqueue({ id: 's-after-off', jobId: 's', kind: 'render' });
        // Listeners of a process are called together for each signal: once the barrier has heard this
        // one, the unsubscribed listener would have heard it too.
        await signalled('the barrier to hear the render signal', () => barrier.includes('render'));
        expect(heard).toEqual([]);
        offBarrier();
      }),
    );
  });
}
