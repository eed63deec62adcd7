// TaskRunReader conformance: a job's tasks with their frames, who ran them, when, and how they
// ended, as the job-tasks route shows them. Tasks are moved through the states by the other
// roles, as the service and workers would; a second handle reads what the first one wrote.
import { describe, expect, it } from 'vitest';
import type { TaskLeases, TaskRunReader, TaskSubmitter } from '../../../../service/ports/tasks.js';
import { withHarness } from '../with-harness.js';
import type { QueueHarness } from './helpers.js';

type Worked = TaskSubmitter & TaskLeases & TaskRunReader;

/** Whether ISO time `t` lies within [from - slack, to + slack] (the Redis clock may differ by a little). */
function within(t: string | null, from: number, to: number, slack = 2000): boolean {
  const ms = t === null ? NaN : Date.parse(t);
  return ms >= from - slack && ms <= to + slack;
}

export function taskRunReaderConformance(open: () => Promise<QueueHarness<Worked>>): void {
  describe('TaskRunReader', () => {
    const withQueue = withHarness(open);

    it(
      "lists a job's tasks oldest first with frames, state, worker, attempt, start and end, also from another handle",
      withQueue(async (h: QueueHarness<Worked>) => {
        const { queue } = h;
        const chunk = (index: number, frames: number[]) => ({
          index,
          start: frames[0]!,
          end: frames.at(-1)!,
          step: 1,
          frames,
        });
        await queue.enqueue({ id: 'r-v', jobId: 'rj', kind: 'validate' });
        await queue.enqueue({ id: 'r-c0', jobId: 'rj', kind: 'render-chunk', payload: chunk(0, [1, 2, 3]) });
        await queue.enqueue({ id: 'r-c1', jobId: 'rj', kind: 'render-chunk', payload: chunk(1, [4, 5]) });
        await queue.enqueue({ id: 'r-c2', jobId: 'rj', kind: 'render-chunk', payload: chunk(2, [6]) });
        await queue.enqueue({ id: 'r-f', jobId: 'rj', kind: 'finalize', after: ['r-c0', 'r-c1', 'r-c2'] });
        await queue.enqueue({ id: 'other', jobId: 'elsewhere', kind: 'validate' });

        const before = Date.now();
        const v = await queue.claim('host-a:slot0', ['validate'], 60_000);
        await queue.complete(v!.id, 'host-a:slot0');
        const c0 = await queue.claim('host-a:gpu0', ['render-chunk'], 60_000);
        const c1 = await queue.claim('host-a:gpu0', ['render-chunk'], 60_000);
        expect([c0?.id, c1?.id]).toEqual(['r-c0', 'r-c1']);
        await queue.fail('r-c1', 'host-a:gpu0', { retryable: false, message: 'Error: out of memory' });
        await queue.fail('r-c0', 'host-a:gpu0', { retryable: true, message: 'Blender crashed (signal 9)' });
        // The retried chunk and the untouched one go to another machine (in an order adapters may differ on).
        const taken = [
          await queue.claim('host-b:gpu1', ['render-chunk'], 60_000),
          await queue.claim('host-b:gpu1', ['render-chunk'], 60_000),
        ];
        expect(taken.map((t) => t?.id).sort()).toEqual(['r-c0', 'r-c2']);
        const after = Date.now();

        const reader = h.other ? await h.other() : queue;
        const runs = await reader.jobTaskRuns('rj');
        expect(runs.map((r) => [r.id, r.kind, r.state, r.frames, r.attempts, r.worker, r.lastError])).toEqual([
          ['r-v', 'validate', 'done', null, 1, 'host-a:slot0', null],
          ['r-c0', 'render-chunk', 'running', [1, 2, 3], 2, 'host-b:gpu1', 'Blender crashed (signal 9)'],
          ['r-c1', 'render-chunk', 'failed', [4, 5], 1, 'host-a:gpu0', 'Error: out of memory'],
          ['r-c2', 'render-chunk', 'running', [6], 1, 'host-b:gpu1', null],
          ['r-f', 'finalize', 'queued', null, 0, null, null],
        ]);
        const [rv, rc0, rc1, rc2, rf] = runs;
        // A finished task keeps who ran it and when it started and ended; an unfinished one has no end.
        expect(within(rv!.startedAt, before, after) && within(rv!.finishedAt, before, after), JSON.stringify(rv)).toBe(
          true,
        );
        expect(Date.parse(rv!.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(rv!.startedAt!) - 5);
        expect(within(rc0!.startedAt, before, after) && rc0!.finishedAt === null, JSON.stringify(rc0)).toBe(true);
        expect(within(rc1!.finishedAt, before, after), JSON.stringify(rc1)).toBe(true);
        expect(within(rc2!.startedAt, before, after) && rc2!.finishedAt === null, JSON.stringify(rc2)).toBe(true);
        expect([rf!.startedAt, rf!.finishedAt]).toEqual([null, null]);
        expect(await reader.jobTaskRuns('nothing-here')).toEqual([]);
      }),
    );

    it(
      'keeps the last worker and the end time once a task is done or its job canceled',
      withQueue(async ({ queue }: QueueHarness<Worked>) => {
        await queue.enqueue({
          id: 'k-a',
          jobId: 'kj',
          kind: 'render-chunk',
          payload: { index: 0, start: 1, end: 1, step: 1, frames: [1] },
        });
        await queue.enqueue({
          id: 'k-b',
          jobId: 'kj',
          kind: 'render-chunk',
          payload: { index: 1, start: 2, end: 2, step: 1, frames: [2] },
        });
        const a = await queue.claim('w-1', ['render-chunk'], 60_000);
        await queue.complete(a!.id, 'w-1');
        await queue.claim('w-2', ['render-chunk'], 60_000);
        await queue.cancelJob('kj');
        const runs = await queue.jobTaskRuns('kj');
        expect(runs.map((r) => [r.id, r.state, r.worker, r.frames])).toEqual([
          ['k-a', 'done', 'w-1', [1]],
          ['k-b', 'canceled', 'w-2', [2]],
        ]);
        expect(runs.every((r) => r.startedAt !== null && r.finishedAt !== null)).toBe(true);
      }),
    );
  });
}
