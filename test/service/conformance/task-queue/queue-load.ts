// QueueLoad conformance: the open tasks by kind that GET /workers shows (extension workers).
// Queued counts tasks waiting for a claim (also those held for their dependencies, or released
// with a delay); running counts claimed ones; finished and canceled tasks count nowhere.
import { describe, expect, it } from 'vitest';
import type { QueueLoad, TaskLeases, TaskSubmitter } from '../../../../service/ports/tasks.js';
import { withHarness } from '../with-harness.js';
import type { QueueHarness } from './helpers.js';

type Loaded = TaskSubmitter & TaskLeases & QueueLoad;

export function queueLoadConformance(open: () => Promise<QueueHarness<Loaded>>): void {
  describe('QueueLoad', () => {
    const withQueue = withHarness(open);

    it(
      'counts open tasks per kind, every kind listed',
      withQueue(async ({ queue }: QueueHarness<Loaded>) => {
        const zero = { queued: 0, running: 0 };
        expect(await queue.countsByKind()).toEqual({
          validate: zero,
          render: zero,
          'render-chunk': zero,
          finalize: zero,
        });
        await queue.enqueue({ id: 'v1', jobId: 'j1', kind: 'validate' });
        await queue.enqueue({ id: 'c1', jobId: 'j2', kind: 'render-chunk' });
        await queue.enqueue({ id: 'c2', jobId: 'j2', kind: 'render-chunk' });
        await queue.enqueue({ id: 'c3', jobId: 'j2', kind: 'render-chunk' });
        await queue.enqueue({ id: 'f', jobId: 'j2', kind: 'finalize', after: ['c1', 'c2', 'c3'] });
        await queue.enqueue({ id: 'gone', jobId: 'j3', kind: 'render-chunk' });
        await queue.cancelJob('j3');
        const a = await queue.claim('w', ['render-chunk'], 60_000);
        const b = await queue.claim('w', ['render-chunk'], 60_000);
        await queue.complete(b!.id, 'w');
        const c = await queue.claim('w', ['render-chunk'], 60_000);
        await queue.release(c!.id, 'w', { delayMs: 60_000 });
        expect(await queue.countsByKind()).toEqual({
          validate: { queued: 1, running: 0 },
          render: zero,
          'render-chunk': { queued: 1, running: 1 },
          finalize: { queued: 1, running: 0 },
        });
        await queue.complete(a!.id, 'w');
        expect((await queue.countsByKind())['render-chunk']).toEqual({ queued: 1, running: 0 });
      }),
    );
  });
}
