// A finished frame's peak memory becomes the job's memory need for its next frames
// (JobInternal.memory, service/domain/job-memory.ts), which placement reads before each frame.
// Written only when a frame peaks above what this process saw of the job: the need moves a few
// times per job, not once per frame.
import { withPeak } from '../../domain/job-memory.js';
import type { WorkerJobStore } from '../../ports/jobs.js';

/** The highest peak this process wrote per job (bounded: the oldest jobs are forgotten first). */
const written = new Map<string, number>();

/** Stores `peakBytes` as the job's peak when it is the highest yet. */
export async function raiseJobPeak(jobs: WorkerJobStore, jobId: string, peakBytes: number | null): Promise<void> {
  if (peakBytes === null || peakBytes <= (written.get(jobId) ?? 0)) return;
  const rec = await jobs.getById(jobId);
  const next = rec && withPeak(rec.internal.memory, peakBytes);
  written.set(jobId, Math.max(peakBytes, rec?.internal.memory?.peakBytes ?? 0));
  if (written.size > 1000) written.delete(written.keys().next().value!);
  if (next) await jobs.update(jobId, {}, { memory: next });
}
