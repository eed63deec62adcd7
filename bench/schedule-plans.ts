// A job as the render planner enqueues it (service/worker/render/preview-plan.ts), for the previews
// and dependencies rows of bench:schedule: its preview frames (first, middle, last: the service's own
// pick) as one-frame chunks first, then the other frames in chunks, then a finalize task the queue
// holds back until every chunk is done.
import { pickPreviewFrames } from '../service/domain/scheduling.js';
import type { TaskQueue } from '../service/ports/tasks.js';

export interface PlannedJob {
  previews: number[];
  /** Every chunk's task id, previews first. */
  chunkIds: string[];
  finalizeId: string;
}

/** Task id of a job's planning task, as the dependencies row enqueues it. */
export const planId = (jobId: string) => `render:${jobId}`;

/**
 * Enqueues a job of frames 1..`frames`: previews first when `previews` (default true), the rest in
 * chunks of `chunk` frames, and its finalize after them.
 */
export async function enqueuePlanned(
  queue: TaskQueue,
  jobId: string,
  frames: number,
  o: { chunk: number; shareGroup: string; previews?: boolean; priority?: number },
): Promise<PlannedJob> {
  const all = Array.from({ length: frames }, (_, i) => i + 1);
  const previews = o.previews === false ? [] : pickPreviewFrames(all, new Set());
  const isPreview = new Set(previews);
  const rest = all.filter((f) => !isPreview.has(f));
  const chunks = [...previews.map((f) => [f])];
  for (let i = 0; i < rest.length; i += o.chunk) chunks.push(rest.slice(i, i + o.chunk));
  const sched = { shareGroup: o.shareGroup, ...(o.priority !== undefined ? { priority: o.priority } : {}) };
  const chunkIds = chunks.map((_, i) => `chunk:${jobId}:${i}`);
  for (const [i, c] of chunks.entries())
    await queue.enqueue({ id: chunkIds[i]!, jobId, kind: 'render-chunk', payload: { frames: c }, ...sched });
  const finalizeId = `finalize:${jobId}`;
  await queue.enqueue({ id: finalizeId, jobId, kind: 'finalize', after: chunkIds, ...sched });
  return { previews, chunkIds, finalizeId };
}
