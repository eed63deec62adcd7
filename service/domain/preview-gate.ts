// The approval gate of preview frames (extension scheduling, `approvePreviews`): the planner
// enqueues the preview chunks and keeps the rest of the plan on the job; "go" (the approve route,
// or the planner when go came first) enqueues it with the finalize task. Planning and "go" may run
// at the same moment, on different machines: each side moves the gate only by its compare-and-set
// (JobRecords.setPreviewGate), which also writes or reads the held chunks in the same write, so
// exactly one side enqueues the rest. Both build the same tasks here, with ids derived from the
// job, so a repeated "go" adds nothing.
import type { Job } from '../../shared/api/job.js';
import type { JobInternal, JobRecord, JobRecords } from '../ports/jobs.js';
import type { TaskSubmitter } from '../ports/tasks.js';
import { enqueueAll } from './enqueue-all.js';
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

/**
 * "Go" after the previews: opens the gate and enqueues the chunks planning held. The open gate and
 * the hold are read in one write: a hold written before it is enqueued here; planning that has not
 * held yet finds the gate open at its own compare-and-set and enqueues every chunk itself. A repeat
 * (or one after a crash between the write and the enqueues) enqueues the same task ids again, which
 * the queue drops. Undefined when the job has no approval pending or given.
 */
export async function approvePreviews(
  env: { jobs: Pick<JobRecords, 'getById' | 'setPreviewGate'>; queue: Pick<TaskSubmitter, 'enqueue' | 'enqueueMany'> },
  jobId: string,
): Promise<{ rec: JobRecord; enqueued: number } | undefined> {
  const opened = await env.jobs.setPreviewGate(jobId, ['waiting'], { gate: 'approved' });
  const rec = opened ?? (await env.jobs.getById(jobId));
  if (!rec || rec.job.scheduling?.previews?.gate !== 'approved') return undefined;
  const tasks = heldTasks(rec.job, rec.internal);
  await enqueueAll(env.queue, tasks);
  return { rec, enqueued: tasks.length };
}
