// QueueHousekeeping conformance: what the queue reports about its tasks, and pruning finished ones.
// Tasks are put in the states to report or prune through the other roles, as the service and
// workers would.
import { describe, expect, it } from 'vitest';
import type { FailureLedger, QueueHousekeeping, TaskLeases, TaskSubmitter } from '../../../../service/ports/tasks.js';
import { withHarness } from '../with-harness.js';
import type { QueueHarness } from './helpers.js';

type Worked = TaskSubmitter & TaskLeases & QueueHousekeeping;
/** The prune test also records a failure, to see the job's counts go with its last task. */
type Pruned = Worked & FailureLedger;

export function queueHousekeepingConformance(open: () => Promise<QueueHarness<Pruned>>): void {
  describe('QueueHousekeeping', () => {
    const withQueue = withHarness(open);

    it(
      "lists a job's tasks with their states, oldest first",
      withQueue(async ({ queue }: QueueHarness<Worked>) => {
        await queue.enqueue({ id: 'c1', jobId: 'j', kind: 'render-chunk' });
        await queue.enqueue({ id: 'c2', jobId: 'j', kind: 'render-chunk' });
        await queue.enqueue({ id: 'x', jobId: 'other', kind: 'render-chunk' });
        const t = await queue.claim('w', ['render-chunk'], 60_000);
        await queue.fail(t!.id, 'w', { retryable: false, message: 'boom' });
        await queue.claim('w', ['render-chunk'], 60_000);
        expect(await queue.jobTasks('j')).toEqual([
          { id: 'c1', kind: 'render-chunk', state: 'failed', attempts: 1, lastError: 'boom' },
          { id: 'c2', kind: 'render-chunk', state: 'running', attempts: 1, lastError: null },
        ]);
        expect(await queue.jobTasks('none')).toEqual([]);
      }),
    );

    it(
      'prunes tasks that finished before a time, with their bookkeeping, and keeps open ones',
      withQueue(async ({ queue }: QueueHarness<Pruned>) => {
        const later = () => new Date(Date.now() + 60_000);
        await queue.enqueue({ id: 'p-a', jobId: 'pj1', kind: 'render-chunk' });
        await queue.enqueue({ id: 'p-b', jobId: 'pj1', kind: 'finalize', after: ['p-a'] });
        await queue.enqueue({ id: 'p-c', jobId: 'pj2', kind: 'render-chunk' });
        await queue.enqueue({ id: 'p-d', jobId: 'pj2', kind: 'validate' });
        await queue.enqueue({ id: 'p-e', jobId: 'pj3', kind: 'validate' });
        const a = await queue.claim('w', ['render-chunk'], 60_000);
        await queue.complete(a!.id, 'w');
        const c = await queue.claim('w', ['render-chunk'], 60_000);
        await queue.fail(c!.id, 'w', { retryable: false, message: 'boom' });
        await queue.recordFailure('pj2', 'host/gpu0');
        await queue.cancelJob('pj3');

        // Nothing finished before the epoch.
        expect(await queue.pruneFinished(new Date(0), 100)).toBe(0);
        expect(await queue.pruneFinished(later(), 2)).toBe(2);
        expect(await queue.pruneFinished(later(), 100)).toBe(1);
        expect(await queue.pruneFinished(later(), 100)).toBe(0);
        // Done, failed and canceled went; queued ones stayed, and the finalize that waited for a
        // pruned task is claimable.
        expect((await queue.jobTasks('pj1')).map((t) => [t.id, t.state])).toEqual([['p-b', 'queued']]);
        expect((await queue.jobTasks('pj2')).map((t) => [t.id, t.state])).toEqual([['p-d', 'queued']]);
        expect(await queue.jobTasks('pj3')).toEqual([]);
        expect(await queue.jobFailures('pj2')).toEqual({ 'host/gpu0': 1 });
        const b = await queue.claim('w', ['finalize'], 60_000);
        expect(b?.id).toBe('p-b');
        await queue.complete(b!.id, 'w');
        const d = await queue.claim('w', ['validate'], 60_000);
        expect(d?.id).toBe('p-d');
        await queue.complete(d!.id, 'w');
        expect(await queue.pruneFinished(later(), 100)).toBe(2);
        // The job's failure counts go with its last task.
        expect(await queue.jobFailures('pj2')).toEqual({});
        expect(await queue.counts()).toMatchObject({ queued: 0, running: 0, done: 0, failed: 0 });
      }),
    );
  });
}
