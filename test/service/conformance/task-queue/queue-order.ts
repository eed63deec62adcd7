// QueueOrder conformance: what the dashboard reads of the claim order (GET /jobs/{id}/queue-ahead,
// GET /farm/share). Frames ahead of a job follow the claim order (priority, then fair share, then
// enqueue order), paused jobs' frames wait apart, and a group's time per frame shows once measured.
import { describe, expect, it } from 'vitest';
import type { QueueOrder } from '../../../../service/ports/queue-order.js';
import type { TaskLeases, TaskScheduling, TaskSubmitter } from '../../../../service/ports/tasks.js';
import { withHarness } from '../with-harness.js';
import type { QueueHarness } from './helpers.js';

type Ordered = TaskSubmitter & TaskLeases & TaskScheduling & QueueOrder;

async function chunks(queue: TaskSubmitter, jobId: string, n: number, opts: { priority?: number; shareGroup: string }) {
  for (let i = 0; i < n; i++)
    await queue.enqueue({ id: `${jobId}-${i}`, jobId, kind: 'render-chunk', payload: { frames: [i] }, ...opts });
}

const byGroup = async (queue: QueueOrder) => Object.fromEntries((await queue.groupLoads()).map((g) => [g.group, g]));

export function queueOrderConformance(open: () => Promise<QueueHarness<Ordered>>): void {
  describe('QueueOrder', () => {
    const withQueue = withHarness(open);

    it(
      "counts the frames and jobs claimed before a job's next frame, and each group's waiting frames",
      withQueue(async ({ queue }: QueueHarness<Ordered>) => {
        await chunks(queue, 'a', 3, { shareGroup: 'ws1/u1' });
        await chunks(queue, 'b', 2, { shareGroup: 'ws2/u2', priority: 5 });
        await chunks(queue, 'c', 2, { shareGroup: 'ws1/u1' });
        // A task that renders no frame (validation) shares no render slot time: never counted.
        await queue.enqueue({ id: 'v', jobId: 'v', kind: 'validate', priority: 9, shareGroup: 'ws1/u1' });
        expect(await queue.queueAhead('c')).toEqual({ tasks: 5, frames: 5, jobs: 2 });
        expect(await queue.queueAhead('a')).toEqual({ tasks: 2, frames: 2, jobs: 1 });
        expect(await queue.queueAhead('b')).toEqual({ tasks: 0, frames: 0, jobs: 0 });
        expect(await queue.queueAhead('nothing')).toBeNull();
        const groups = await byGroup(queue);
        expect(groups['ws1/u1']).toMatchObject({ waitingFrames: 5, waitingJobs: 2, pausedFrames: 0 });
        expect(groups['ws2/u2']).toMatchObject({ waitingFrames: 2, waitingJobs: 1, pausedFrames: 0 });
        expect(groups['ws1/u1']?.secondsPerFrame).toBeNull();

        const first = await queue.claim('w', ['render-chunk'], 60_000);
        expect(first?.jobId).toBe('b');
        expect(await queue.queueAhead('c')).toEqual({ tasks: 4, frames: 4, jobs: 2 });
        await queue.complete(first!.id, 'w');
        expect((await byGroup(queue))['ws2/u2']?.secondsPerFrame).toEqual(expect.any(Number));

        expect(await queue.pauseJob('a')).toBe(3);
        expect(await queue.queueAhead('c')).toEqual({ tasks: 1, frames: 1, jobs: 1 });
        expect(await queue.queueAhead('a')).toBeNull();
        expect((await byGroup(queue))['ws1/u1']).toMatchObject({ waitingFrames: 2, waitingJobs: 1, pausedFrames: 3 });
      }),
    );
  });
}
