// Planning a render: the final config (request over analysis, corrected for this worker's
// Blender and devices), the frames split into chunks, and a finalize task that the queue holds
// back until every chunk is done. Re-running it (a crash) enqueues the same task ids: no-ops.
import { parseRequestedVersion, minorVersion } from '../../../blender/builds.js';
import { routeBlender } from '../runtime/blender-route.js';
import { resolveFinalConfig } from '../../domain/final-config.js';
import { chunkFrames, formatFrameRanges, guidedChunks } from '../../domain/frame-ranges.js';
import { newTasks, taskIds } from '../../domain/tasks.js';
import { scheduled } from '../../domain/scheduling.js';
import type { JobRecord } from '../../ports/jobs.js';
import type { WorkerEnv } from '../runtime/env.js';
import { FatalTaskError } from '../runtime/outcomes.js';
import type { TaskHandler } from '../runtime/runtime.js';
import { afterMoveFrom } from '../runtime/await-move.js';
import { ProgressTracker } from '../render/progress-tracker.js';
import { copyRequeuedFrames } from '../render/requeue-render.js';
import { copyEstimatedFrames } from '../outputs/estimate-frames.js';
import { awaitDependencies } from '../render/dependency-wait.js';
import { enqueuePlan, planWithPreviews } from '../render/preview-plan.js';

/**
 * `planned`: told once a render is planned here (warm mode: its scene starts loading on idle slots
 * while the chunks are enqueued and claimed).
 */
export function renderPlanHandler(env: WorkerEnv, planned?: (rec: JobRecord) => void): TaskHandler {
  return async (task, ctx) => {
    const rec = await afterMoveFrom(env.jobs, task.jobId, 'validated', ctx.signal);
    if (!rec || rec.job.status !== 'booting') return;
    // Dependencies first (extension scheduling): nothing is planned before they all completed.
    await awaitDependencies(env.jobs, rec);
    const scene = rec.job.analysis?.output;
    if (!scene) {
      throw FatalTaskError.render('NOT_VALIDATED', 'The job has no analysis: validate it before rendering.');
    }
    const requested = rec.job.requestedConfig ?? {};
    const picked = await routeRender(env, rec, scene, ctx);
    if (!picked) return;
    const caps = await env.capabilities(picked.build);
    const { finalConfig, frames } = resolveFinalConfig(scene, rec.job.analysis?.config ?? {}, requested, {
      ...caps,
      ...(picked.note ? { buildNote: picked.note } : {}),
    });
    if (frames.length === 0) throw FatalTaskError.render('NO_FRAMES', 'The frame ranges select no frame.');
    const copied = await framesKept(env, rec, finalConfig, frames, ctx);
    const skip = new Set(copied);
    const plan = await planWithPreviews(
      rec,
      frames,
      frames.filter((f) => !skip.has(f)),
      (rest) => planChunks(env, rest),
    );
    const chunks = plan.chunks;
    const chunkTaskIds = chunks.map((_, i) => taskIds.chunk(rec.job.id, i));
    ctx.log.info(
      { frames: frames.length, chunks: chunks.length, blender: picked.build.version.text },
      'render planned',
    );
    const updated = await env.jobs.update(
      rec.job.id,
      { finalConfig },
      {
        render: {
          blender: picked.build.binary,
          blenderVersion: minorVersion(picked.build),
          chunkTaskIds,
          frames: frames.length,
          slots: env.renderSlots,
          ...(copied.length ? { copiedFrames: formatFrameRanges(copied) } : {}),
        },
      },
    );
    if (copied.length)
      await env.jobs.setProgress(
        new ProgressTracker({ jobId: rec.job.id, frames, doneFrames: copied }).snapshot('booting'),
      );
    if (updated && chunks.length) planned?.(updated);
    const requires = {
      blender: minorVersion(picked.build),
      ...(finalConfig.minimumRam ? { minimumRamGiB: finalConfig.minimumRam } : {}),
    };
    // Chunks may run on other machines: any worker with the same Blender major.minor may take them.
    await enqueuePlan(env, updated ?? rec, plan, requires);
  };
}

type Ctx = Parameters<TaskHandler>[1];
type AnalysisOutput = NonNullable<NonNullable<JobRecord['job']['analysis']>['output']>;

/** The build that renders here, or undefined when planning was handed on to a worker that has one. */
async function routeRender(env: WorkerEnv, rec: JobRecord, scene: AnalysisOutput, ctx: Ctx) {
  // The file's version from the analysis (a job validated before routing existed: its asked version).
  const file = parseRequestedVersion(scene.hostFileVersion) ?? parseRequestedVersion(scene.hostVersionForRender);
  const asked = parseRequestedVersion(rec.job.requestedConfig?.hostVersionForRender);
  if (!file)
    throw FatalTaskError.render(
      'NOT_VALIDATED',
      'The analysis does not say which Blender saved the file: validate it again.',
    );
  const route = await routeBlender(env, file, asked);
  if (route.where === 'nowhere')
    throw FatalTaskError.render('BLENDER_VERSION_UNAVAILABLE', route.message, {
      fileVersion: `${file.major}.${file.minor}`,
    });
  if (route.where === 'elsewhere') {
    ctx.log.info({ requires: route.requires }, 'planning handed on to a worker with a fitting Blender');
    await env.queue.enqueue(scheduled(newTasks.routed('render', rec.job.id, route.requires), rec.job));
    return undefined;
  }
  return route;
}

/** Frames another job already rendered for this one, copied rather than rendered again (sorted). */
async function framesKept(
  env: WorkerEnv,
  rec: JobRecord,
  finalConfig: Parameters<typeof copyRequeuedFrames>[2],
  frames: number[],
  ctx: Ctx,
) {
  // A requeued job copies the frames its old job finished: only the others are rendered.
  const requeued = await copyRequeuedFrames(env, rec, finalConfig, frames, ctx.log);
  // An estimate of the same request kept its sample frames: they are not rendered again either.
  const estimated = await copyEstimatedFrames(
    env,
    { ...rec, job: { ...rec.job, requestedConfig: rec.job.requestedConfig ?? {} } },
    finalConfig,
    frames.filter((f) => !requeued.includes(f)),
    ctx.log,
  );
  return [...requeued, ...estimated].sort((a, b) => a - b);
}

async function planChunks(env: WorkerEnv, toRender: number[]) {
  // Warm slots keep the scene loaded between tasks: chunks shrink to single frames as the job ends
  // (chunkFrames caps them). Chunked mode amortises one Blender start per chunk.
  const fixed = env.settings.chunkFrames;
  // The farm's live slots when the registry can say (a failed read only loses the shortcut below).
  const farm = env.settings.renderMode === 'warm' ? await env.farmSlots?.().catch(() => undefined) : undefined;
  const slots = Math.max(1, farm ?? env.renderSlots);
  return env.settings.renderMode === 'warm'
    ? guidedChunks(toRender, { slots, alone: farm !== undefined && slots <= 1, ...(fixed ? { maxChunk: fixed } : {}) })
    : chunkFrames(toRender, { slots: env.renderSlots, ...(fixed ? { minChunk: fixed, maxChunk: fixed } : {}) });
}
