// Preview frames first (extension scheduling, on by default): the first, middle and last frames of
// a render are chunks of their own, enqueued before the rest, so an artist sees a broken camera or
// a missing texture in the first seconds. With the approval gate the rest waits on the job
// (domain/preview-gate.ts) until "go".
import { pickPreviewFrames } from '../../domain/scheduling.js';
import type { PreviewHold } from '../../domain/preview-gate.js';
import { scheduled } from '../../domain/scheduling.js';
import { enqueueAll } from '../../domain/enqueue-all.js';
import { newTasks, taskIds, type TaskRequirements } from '../../domain/tasks.js';
import type { FrameChunk } from '../../domain/frame-ranges.js';
import type { JobRecord, WorkerJobStore } from '../../ports/jobs.js';
import type { TaskSubmitter } from '../../ports/tasks.js';

export interface PreviewPlan {
  /** Every chunk, previews first: chunk i is task `chunk:<job>:<i>`. */
  chunks: FrameChunk[];
  /** The preview frames (sorted; empty when previews are off or all kept). */
  previews: number[];
}

/**
 * Splits `toRender` (the frames not kept) into preview chunks, one frame each, and the rest as
 * `plan` chunks them. `frames` is every frame of the render, from which the previews are picked.
 */
export async function planWithPreviews(
  rec: JobRecord,
  frames: readonly number[],
  toRender: readonly number[],
  plan: (frames: number[]) => Promise<FrameChunk[]>,
): Promise<PreviewPlan> {
  const todo = new Set(toRender);
  const on = rec.job.scheduling?.previewFrames ?? true;
  const kept = new Set(frames.filter((f) => !todo.has(f)));
  const picked = on ? pickPreviewFrames(frames, kept) : [];
  // A render of no more frames than its previews is planned as before: previews first would change nothing.
  const previews = picked.length < toRender.length ? picked : [];
  const isPreview = new Set(previews);
  const rest = await plan(toRender.filter((f) => !isPreview.has(f)));
  const single = (f: number): FrameChunk => ({ start: f, end: f, step: 1, frames: [f] });
  return { chunks: [...previews.map(single), ...rest], previews };
}

/**
 * Enqueues the plan's chunks (previews first, so they are claimed first among the job's own) and
 * its finalize task, each with the job's priority and fair-share group; with the approval gate
 * still closed, only the previews, the rest kept on the job for "go". The gate moves only by its
 * compare-and-set, the hold in the same write: "go" landing while this runs either finds the hold
 * (and enqueues it) or makes the hold's write fail (and the rest is enqueued here), never both.
 */
export async function enqueuePlan(
  env: {
    jobs: Pick<WorkerJobStore, 'getById' | 'setPreviewGate'>;
    queue: Pick<TaskSubmitter, 'enqueue' | 'enqueueMany'>;
  },
  rec: JobRecord,
  p: PreviewPlan,
  requires: TaskRequirements,
): Promise<void> {
  const job = rec.job;
  const setGate = env.jobs.setPreviewGate?.bind(env.jobs);
  if (!setGate) throw new Error('planning needs a job store that sets the preview gate (setPreviewGate)');
  const ids = p.chunks.map((_, i) => taskIds.chunk(job.id, i));
  const chunkTask = (c: FrameChunk, index: number) =>
    scheduled(
      newTasks.chunk(job.id, { index, start: c.start, end: c.end, step: c.step, frames: c.frames, requires }),
      job,
    );
  // Fresh: the approve route may have written since planning read the job.
  const now = (await env.jobs.getById(job.id)) ?? rec;
  const gate = now.job.scheduling?.previews?.gate ?? 'none';
  if (gate === 'waiting' && p.previews.length > 0 && p.chunks.length > p.previews.length) {
    // The previews render whatever "go" does meanwhile: enqueued before the hold.
    await enqueueAll(env.queue, p.chunks.slice(0, p.previews.length).map(chunkTask));
    const hold: PreviewHold = {
      chunks: p.chunks.slice(p.previews.length).map((c, k) => [p.previews.length + k, c.start, c.end, c.step]),
      requires,
    };
    if (await setGate(job.id, ['waiting'], { gate: 'waiting', frames: p.previews }, { previewHold: hold })) return;
    // The gate is no longer waiting: "go" came since the read and found no hold, so the rest goes on here.
  }
  if (now.job.scheduling) {
    // A waiting gate with nothing to hold back (the previews are the whole render) opens.
    const to = gate === 'none' ? 'none' : 'approved';
    await setGate(job.id, ['none', 'waiting', 'approved'], { gate: to, frames: p.previews });
  }
  // One batch (TaskSubmitter.enqueueMany): on PostgreSQL a few statements, not six per chunk.
  await enqueueAll(env.queue, [...p.chunks.map(chunkTask), scheduled(newTasks.finalize(job.id, ids), job)]);
}
