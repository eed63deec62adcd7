// When a job's render takes over its estimate's warm Blender (estimate-render.ts keeps it in the
// slot's pool), the scene load and the warm-up (the lead's cold frames' excess: estimate-samples.ts)
// that Blender paid become the render's: they are billed to the job, as the load and first frames of
// the render's own Blender would have been, and taken off the estimate's own cost, which from then
// on counts only what the render could not use (extension estimate: `ownCost`). The amounts:
// domain/estimate-takeover.ts.
import type { Logger } from 'pino';
import type { LeadWarmup } from '../../domain/estimate-takeover.js';
import { takeover } from '../../domain/estimate-takeover.js';
import type { RenderRun } from '../../domain/normalized-seconds.js';
import type { WorkerEnv } from '../runtime/env.js';
import type { JobRun } from './job-run.js';

/**
 * WarmRender's `handOver` for the Blender of the estimate of `jobId` started at `startedAt`;
 * `lead()` answers what its lead measured (null until measured, or on a job without one).
 */
export function handOverLoad(
  env: Pick<WorkerEnv, 'jobs'>,
  jobId: string,
  startedAt: string,
  lead: () => LeadWarmup | null = () => null,
): (job: JobRun, load: { label: string; run: RenderRun }, log: Logger) => Promise<void> {
  return async (job, { label, run }, log) => {
    const ms = Math.round(run.seconds * 1000);
    log.info({ warm: label, piece: 'load', ms, device: run.device }, 'render time billed');
    await job.bill(`${label}-load`, run);
    // The estimate's figure, unless a new estimate replaced it meanwhile. Never in the render's way.
    try {
      const est = (await env.jobs.getById(jobId))?.internal.estimate;
      if (!est || est.startedAt !== startedAt || est.state !== 'ready') return;
      const moved = takeover(est, run, lead());
      if (!moved) return;
      const { warmup, ownSeconds, ownNormalizedSeconds } = moved;
      const warmupMs = Math.round(warmup.seconds * 1000);
      // Billed before the estimate lets go of it: a failure between leaves it counted twice, never lost.
      if (warmupMs > 0) {
        log.info({ warm: label, piece: 'warmup', ms: warmupMs, device: warmup.device }, 'render time billed');
        await job.bill(`${label}-warmup`, warmup);
      }
      const estimate = { ...est, ownSeconds, ownNormalizedSeconds, takenOver: true };
      await env.jobs.update(jobId, {}, { estimate });
      log.info(
        { warm: label, ms, warmupMs, ownSeconds },
        "the render took over the estimate's Blender, load and warm-up",
      );
    } catch (err) {
      log.warn({ err }, "the estimate's own cost still counts the load and warm-up the render took over");
    }
  };
}
