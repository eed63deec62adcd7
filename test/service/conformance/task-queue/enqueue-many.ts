// TaskSubmitter.enqueueMany conformance: a batch has the outcome of enqueue called once per task in
// order. Each scenario runs on two fresh queues, one enqueueing task by task and the other in one
// batch (domain/enqueue-all.ts: enqueueMany, which every queue has; one by one where one lacks it),
// and the claim order (priority, then fair-share tags, then seq) must come out the same. Tasks are
// claimed and never completed: a completion charges measured time, which would make the order
// depend on the clock.
import { describe, expect, it } from 'vitest';
import { enqueueAll } from '../../../../service/domain/enqueue-all.js';
import type {
  EnqueueTask,
  QueueHousekeeping,
  TaskLeases,
  TaskScheduling,
  TaskSubmitter,
} from '../../../../service/ports/tasks.js';
import type { ShareWeights } from '../../../../service/ports/share-weights.js';
import type { QueueHarness } from './helpers.js';

type Queue = TaskSubmitter & TaskLeases & TaskScheduling & ShareWeights & QueueHousekeeping;
type Enqueue = (q: Queue, tasks: EnqueueTask[]) => Promise<void>;

const oneByOne: Enqueue = async (q, tasks) => {
  for (const t of tasks) await q.enqueue(t);
};
const batched: Enqueue = (q, tasks) => enqueueAll(q, tasks);

/**
 * A planned job: its previews as one-frame chunks, the rest in chunks of 1-3 frames, and its finalize
 * (unless `finalize` is false).
 */
function planned(
  jobId: string,
  {
    finalize: withFinalize = true,
    ...o
  }: { shareGroup: string; priority?: number; chunks?: number; finalize?: boolean },
): EnqueueTask[] {
  const chunks: EnqueueTask[] = [];
  for (let i = 0; i < (o.chunks ?? 12); i++) {
    const frames = Array.from({ length: i < 3 ? 1 : 1 + (i % 3) }, (_, k) => i * 10 + k);
    chunks.push({ id: `${jobId}:chunk:${i}`, jobId, kind: 'render-chunk', payload: { frames }, ...o });
  }
  const finalize = { id: `${jobId}:finalize`, jobId, kind: 'finalize' as const, after: chunks.map((c) => c.id), ...o };
  return withFinalize ? [...chunks, finalize] : chunks;
}

/** Claims every claimable task of `kinds`, without completing any: the claim order, with payloads. */
async function claimOrder(q: Queue, kinds: EnqueueTask['kind'][] = ['render-chunk']) {
  const order: string[] = [];
  for (let t; (t = await q.claim('w', kinds, 600_000));) order.push(`${t.id} ${JSON.stringify(t.payload)}`);
  return order;
}

export function enqueueManyConformance(open: () => Promise<QueueHarness<Queue>>): void {
  /** Runs `scenario` on a fresh queue per way of enqueueing; what each returned. */
  async function twins<T>(scenario: (q: Queue, enqueue: Enqueue) => Promise<T>): Promise<[T, T]> {
    const out: T[] = [];
    for (const enqueue of [oneByOne, batched]) {
      const h = await open();
      try {
        out.push(await scenario(h.queue, enqueue));
      } finally {
        await h.close();
      }
    }
    return [out[0]!, out[1]!];
  }

  /**
   * Backlogs of two other groups, one a sibling of ws1/u1 in workspace ws1 (weight 2, shared while
   * both wait). The sibling's one frame (no finalize: a finalize's tag is the finalize queue's, far
   * ahead) ends its wait between the queue's head and ws1/u1's first tag, so a batch that took the
   * virtual time from before its first task got another weight.
   */
  async function backlog(q: Queue, bgPriority = 0) {
    await q.setShareWeight('ws1', 2);
    await q.setShareWeight('ws2', 1);
    await oneByOne(q, planned('bg', { shareGroup: 'ws2/x', priority: bgPriority, chunks: 20 }));
    await oneByOne(q, planned('sib', { shareGroup: 'ws1/u2', chunks: 1, finalize: false }));
  }

  describe('TaskSubmitter.enqueueMany', () => {
    it.each([
      ['into an empty queue', undefined, undefined],
      ['behind a backlog of the same priority', 0, 0],
      ['ahead of a backlog (a higher priority)', 0, 7],
      ['behind a backlog of a higher priority', 9, 0],
    ])('claims as one enqueue after another: %s', async (_name, bgPriority, priority) => {
      const [one, batch] = await twins(async (q, enqueue) => {
        if (bgPriority !== undefined) await backlog(q, bgPriority);
        const sched = { shareGroup: 'ws1/u1', ...(priority !== undefined ? { priority } : {}) };
        await enqueue(q, planned('job', { ...sched, finalize: false }));
        // A second job of the group in its own batch: its tags follow the first one's, and its place
        // among the other groups' shows them.
        await enqueue(q, planned('job2', { shareGroup: 'ws1/u1', chunks: 4 }));
        return { order: await claimOrder(q), tasks: (await q.jobTasks('job')).map((t) => t.id) };
      });
      expect(batch).toEqual(one);
      expect(one.tasks).toEqual(planned('job', { shareGroup: '', finalize: false }).map((t) => t.id));
      expect(one.order).toHaveLength(12 + 4 + (bgPriority !== undefined ? 21 : 0));
    });

    it('skips ids already queued or repeated in the batch, and keeps the first payload', async () => {
      const [one, batch] = await twins(async (q, enqueue) => {
        await q.enqueue({ id: 'x:1', jobId: 'x', kind: 'render-chunk', payload: { frames: [1] }, shareGroup: 'g' });
        const t = (id: string, f: number): EnqueueTask => ({
          id,
          jobId: 'x',
          kind: 'render-chunk',
          payload: { frames: [f] },
          shareGroup: 'g',
        });
        await enqueue(q, [t('x:0', 0), t('x:1', 99), t('x:2', 2), t('x:0', 98)]);
        return { order: await claimOrder(q), tasks: (await q.jobTasks('x')).map((r) => r.id) };
      });
      expect(batch).toEqual(one);
      expect(one.tasks).toEqual(['x:1', 'x:0', 'x:2']);
      expect(one.order).toEqual(['x:1 {"frames":[1]}', 'x:0 {"frames":[0]}', 'x:2 {"frames":[2]}']);
    });

    it('holds a paused job’s batch until resume, then claims it as one by one would', async () => {
      const [one, batch] = await twins(async (q, enqueue) => {
        await backlog(q);
        await q.enqueue({ id: 'p:validate', jobId: 'p', kind: 'validate', shareGroup: 'ws1/u1' });
        await q.pauseJob('p');
        await enqueue(q, planned('p', { shareGroup: 'ws1/u1' }));
        const held = await claimOrder(q);
        await q.resumeJob('p');
        return { held, order: await claimOrder(q) };
      });
      expect(batch).toEqual(one);
      expect(one.held.some((c) => c.startsWith('p:'))).toBe(false);
      expect(one.order.filter((c) => c.startsWith('p:'))).toHaveLength(12);
    });

    it('holds the finalize until every chunk of the batch is done', async () => {
      const [, batch] = await twins(async (q, enqueue) => {
        await enqueue(q, planned('f', { shareGroup: 'g', chunks: 3 }));
        const chunks = await claimOrder(q, ['render-chunk', 'finalize']);
        const early = await q.claim('w', ['finalize'], 60_000);
        for (const c of chunks) await q.complete(c.split(' ')[0]!, 'w');
        return { chunks, early, finalize: (await q.claim('w', ['finalize'], 60_000))?.id };
      });
      expect(batch).toMatchObject({ early: undefined, finalize: 'f:finalize' });
      expect(batch.chunks).toHaveLength(3);
    });
  });
}
