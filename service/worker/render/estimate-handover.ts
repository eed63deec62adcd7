// When a job's render takes over its estimate's warm Blender (estimate-render.ts keeps it in the
// slot's pool), the scene load that Blender paid becomes the render's: it is billed to the job, as
// the load of the render's own Blender would have been, and taken off the estimate's own cost,
// which from then on counts only what the render could not use (extension estimate: `ownCost`).
import type { Logger } from 'pino';
import { normalizedSeconds, type RenderRun } from '../../domain/normalized-seconds.js';
import type { WorkerEnv } from '../runtime/env.js';
import type { JobRun } from './job-run.js';

const round1 = (n: number) => Math.max(0, Math.round(n * 10) / 10);

/** WarmRender's `handOver` for the Blender of the estimate of `jobId` started at `startedAt`. */
export function handOverLoad(
  env: Pick<WorkerEnv, 'jobs'>,
  jobId: string,
  startedAt: string,
): (job: JobRun, load: { label: string; run: RenderRun }, log: Logger) => Promise<void> {
  return async (job, { label, run }, log) => {
    const ms = Math.round(run.seconds * 1000);
    log.info({ warm: label, piece: 'load', ms, device: run.device }, 'render time billed');
    await job.bill(`${label}-load`, run);
    // The estimate's figure, unless a new estimate replaced it meanwhile. Never in the render's way.
    try {
      const est = (await env.jobs.getById(jobId))?.internal.estimate;
      if (!est || est.startedAt !== startedAt || est.state !== 'ready') return;
      const ownSeconds = round1((est.ownSeconds ?? 0) - run.seconds);
      const ownNormalizedSeconds = round1((est.ownNormalizedSeconds ?? 0) - normalizedSeconds([run]));
      await env.jobs.update(jobId, {}, { estimate: { ...est, ownSeconds, ownNormalizedSeconds } });
      log.info({ warm: label, ms, ownSeconds }, "the render took over the estimate's Blender and its load");
    } catch (err) {
      log.warn({ err }, "the estimate's own cost still counts the load the render took over");
    }
  };
}
