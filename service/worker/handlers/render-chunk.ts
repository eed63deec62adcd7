// A render task in chunked mode: one Blender process renders the chunk's frames (a process start
// costs ~1.6 s, so never one per frame; see render/chunk-run.ts). A crash or a hang is retryable,
// and the retry renders only the frames that are not in `out/` yet.
import { remainingChunk } from '../../domain/frame-ranges.js';
import { taskPayload, type ChunkPayload } from '../../domain/tasks.js';
import { finishedFrames } from '../outputs/chunk-files.js';
import { dropDamagedFrames } from '../outputs/frame-integrity.js';
import { syncFrames } from '../outputs/durable-frames.js';
import { renderPart } from '../render/chunk-run.js';
import type { JobRuns } from '../render/job-run.js';
import { clearHandBack, wasHandedBack } from '../render/preemption-notice.js';
import type { WorkerEnv } from '../runtime/env.js';
import { FatalTaskError, RetryableTaskError } from '../runtime/outcomes.js';
import type { TaskHandler } from '../runtime/runtime.js';

export function renderChunkHandler(env: WorkerEnv, runs: JobRuns): TaskHandler {
  return async (task, ctx) => {
    const rec = await env.jobs.getById(task.jobId);
    if (!rec || (rec.job.status !== 'booting' && rec.job.status !== 'rendering')) return;
    let chunk: ChunkPayload;
    try {
      chunk = taskPayload({ ...task, kind: 'render-chunk' });
    } catch (err) {
      throw FatalTaskError.render('BAD_TASK_PAYLOAD', (err as Error).message);
    }
    const run = await runs.acquire(rec, ctx.signal);
    try {
      // A task a warm slot handed back to a higher-priority job runs here like any other: it looks
      // for its frames done anyway, so it only takes itself out of the job's notice.
      if (wasHandedBack(rec, task.id)) void clearHandBack(env.jobs, rec.job.id, task.id, ctx.log);
      // Frames another machine finished before it died are fetched, not rendered again.
      if (run.staging) await run.staging.fetchMissing(run.out, new Set(chunk.frames));
      // Files from before this worker started (a restart) count only if a power loss left them whole.
      const { done } = await dropDamagedFrames(
        run.final,
        run.out,
        await finishedFrames(run.final, run.out, chunk.frames),
        env.startedAt,
      );
      for (const part of remainingChunk(chunk, done)) await renderPart(run, task, ctx, part);
      await run.staging?.stageFrames(run.out, new Set(chunk.frames));
      const missing = chunk.frames.filter((f) => !run.tracker.doneFrames.has(f));
      const stillMissing = missing.length ? [...(await finishedFrames(run.final, run.out, missing))] : [];
      const lost = missing.filter((f) => !stillMissing.includes(f));
      if (lost.length) {
        throw new RetryableTaskError(`Blender finished without writing frame ${lost[0]}`, { frames: lost });
      }
      // On the disk before the queue hears the chunk is done: nothing renders a done chunk again.
      await syncFrames(run.out, chunk.frames);
    } finally {
      runs.release(run);
    }
  };
}
