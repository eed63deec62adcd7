// TaskSubmitter conformance: what the API routes rely on when they add a job's work or cancel it.
// Claims stand in for the worker, to see what enqueue and cancelJob left in the queue.
import { describe, expect, it } from 'vitest';
import type { TaskLeases, TaskSubmitter } from '../../../../service/ports/tasks.js';
import { withHarness } from '../with-harness.js';
import type { QueueHarness } from './helpers.js';

type Claimable = TaskSubmitter & TaskLeases;

export function taskSubmitterConformance(open: () => Promise<QueueHarness<Claimable>>): void {
  describe('TaskSubmitter', () => {
    const withQueue = withHarness(open);

    it(
      'holds a task back until every task it waits for is done',
      withQueue(async ({ queue, reopen }: QueueHarness<Claimable>) => {
        await queue.enqueue({ id: 'c1', jobId: 'j', kind: 'render-chunk' });
        await queue.enqueue({ id: 'c2', jobId: 'j', kind: 'render-chunk' });
        await queue.enqueue({ id: 'fin', jobId: 'j', kind: 'finalize', after: ['c1', 'c2'] });
        expect(await queue.claim('w', ['finalize'], 60_000)).toBeUndefined();
        const a = await queue.claim('w', ['render-chunk'], 60_000);
        await queue.complete(a!.id, 'w');
        expect(await queue.claim('w', ['finalize'], 60_000)).toBeUndefined();
        const b = await queue.claim('w', ['render-chunk'], 60_000);
        await queue.fail(b!.id, 'w', { retryable: true, message: 'crash' });
        expect(await queue.claim('w', ['finalize'], 60_000)).toBeUndefined();
        // The join is stored with the task: it holds across a restart.
        const again = await reopen();
        const retry = await again.claim('w', ['render-chunk'], 60_000);
        expect(retry?.id).toBe('c2');
        await again.complete('c2', 'w');
        expect((await again.claim('w', ['finalize'], 60_000))?.id).toBe('fin');
      }),
    );

    it(
      "drops a canceled job's queued and running tasks",
      withQueue(async ({ queue }: QueueHarness<Claimable>) => {
        await queue.enqueue({ id: 'x1', jobId: 'cancel-me', kind: 'render-chunk' });
        await queue.enqueue({ id: 'x2', jobId: 'cancel-me', kind: 'render-chunk' });
        await queue.enqueue({ id: 'y', jobId: 'keep', kind: 'render-chunk' });
        await queue.claim('w', ['render-chunk'], 60_000);
        expect(await queue.cancelJob('cancel-me')).toBe(2);
        expect((await queue.claim('w', ['render-chunk'], 60_000))?.jobId).toBe('keep');
        expect(await queue.claim('w', ['render-chunk'], 60_000)).toBeUndefined();
      }),
    );

    it(
      'keeps queued tasks across a restart',
      withQueue(async (h: QueueHarness<Claimable>) => {
        await h.queue.enqueue({ id: 'durable', jobId: 'j', kind: 'validate', payload: { keep: true } });
        const reopened = await h.reopen();
        expect(await reopened.claim('w', ['validate'], 60_000)).toMatchObject({
          id: 'durable',
          payload: { keep: true },
        });
      }),
    );
  });
}
