// FailureLedger conformance: the per-job blocklist's counts, as workers record and read them.
import { describe, expect, it } from 'vitest';
import type { FailureLedger } from '../../../../service/ports/tasks.js';
import { withHarness } from '../with-harness.js';
import type { QueueHarness } from './helpers.js';

export function failureLedgerConformance(open: () => Promise<QueueHarness<FailureLedger>>): void {
  describe('FailureLedger', () => {
    const withQueue = withHarness(open);

    it(
      'counts failures per worker and job for the blocklist, across a restart',
      withQueue(async (h: QueueHarness<FailureLedger>) => {
        expect(await h.queue.jobFailures('j')).toEqual({});
        expect(await h.queue.recordFailure('j', 'render-01/gpu0')).toBe(1);
        expect(await h.queue.recordFailure('j', 'render-01/gpu0')).toBe(2);
        expect(await h.queue.recordFailure('j', 'render-02/gpu0')).toBe(1);
        expect(await h.queue.recordFailure('other', 'render-01/gpu0')).toBe(1);
        const reopened = await h.reopen();
        expect(await reopened.jobFailures('j')).toEqual({ 'render-01/gpu0': 2, 'render-02/gpu0': 1 });
      }),
    );
  });
}
