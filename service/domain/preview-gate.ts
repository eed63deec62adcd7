// The approval gate of preview frames (extension scheduling, `approvePreviews`): the planner
// enqueues the preview chunks and keeps the rest of the plan on the job; "go" (the approve route,
// or the planner when go came first) enqueues it with the finalize task. Both sides build the
// same tasks here, with ids derived from the job, so enqueueing twice adds nothing.
import type { Job } from '../../shared/api/job.js';
import type { JobInternal } from '../ports/jobs.js';
import { scheduled } from './scheduling.js';
import { newTasks, type TaskRequirements } from './tasks.js';

/**
 * The chunks held back until approval, each `[index, start, end, step]` (a chunk is one arithmetic
 * run, so its frames follow): a compact form, since a long render holds thousands.
 */
export interface PreviewHold {
  chunks: [number, number, number, number][];
  requires: TaskRequirements;
}

/** The tasks "go" enqueues: the held chunks, then the finalize task that waits for every chunk. */
export function heldTasks(
  job: Pick<Job, 'id' | 'workspaceId' | 'userId' | 'scheduling'>,
  internal: Pick<JobInternal, 'previewHold' | 'render'>,
): ReturnType<typeof newTasks.chunk>[] {
  const hold = internal.previewHold;
  if (!hold || !internal.render) return [];
  const chunks = hold.chunks.map(([index, start, end, step]) => {
    const frames: number[] = [];
    for (let f = start; f <= end; f += step) frames.push(f);
    return scheduled(newTasks.chunk(job.id, { index, start, end, step, frames, requires: hold.requires }), job);
  });
  const all = internal.render.chunkTaskIds.length ? internal.render.chunkTaskIds : chunks.map((c) => c.id);
  return [...chunks, scheduled(newTasks.finalize(job.id, all), job)];
}
