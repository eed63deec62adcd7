// The worker's part of an estimate (extension estimate): on a render slot, with the job's real
// settings (the request resolved as the render's plan would: render-plan.ts), it sets up the run
// the sample frames render in (render/estimate-render.ts): the Blender build, the project, a folder of its
// own and a JobRun whose progress is not written. The job stays `validated`: its status never
// moves here, and whatever goes wrong fails the estimate, never the job.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { parseRequestedVersion, minorVersion } from '../../../blender/builds.js';
import type { EstimateInternal } from '../../domain/estimate-state.js';
import { resolveFinalConfig } from '../../domain/final-config.js';
import { stepFrames } from '../../domain/frame-steps.js';
import { taskScheduling } from '../../domain/scheduling.js';
import type { FrameStat } from '../../ports/frame-stats.js';
import type { JobRecord } from '../../ports/jobs.js';
import type { Task } from '../../ports/tasks.js';
import { prepareProject } from '../project/job-files.js';
import { routeBlender } from '../runtime/blender-route.js';
import { redactPaths } from '../runtime/failed-reason.js';
import type { WorkerEnv } from '../runtime/env.js';
import type { TaskContext, TaskHandler } from '../runtime/runtime.js';
import type { WarmPool } from '../runtime/warm-pool.js';
import type { WarmRender } from '../render/warm-render.js';
import { JobRun } from '../render/job-run.js';
import { ProgressTracker } from '../render/progress-tracker.js';
import { sampleFrames, sampleThumbnails } from '../render/estimate-render.js';
import { saveEstimate } from '../render/estimate-save.js';

/** The job's priority and fair-share group, for the tasks this hands on (extension scheduling). */
const sched = (rec: JobRecord) => taskScheduling(rec.job);

/** Whether a task is an estimate's (it travels as a render-chunk task so that render slots take it). */
export const isEstimateTask = (task: Pick<Task, 'id'>) => task.id.startsWith('estimate:');

const stillWanted = (rec: JobRecord | undefined) =>
  !!rec &&
  rec.job.status === 'validated' &&
  !rec.internal.renderRequestedAt &&
  rec.internal.estimate?.state === 'sampling';

/**
 * Runs the job's estimate. Whatever goes wrong fails the estimate, never the task: a failed task
 * would fail the job, and a spec client's validated job must not fail for an estimate.
 */
export async function runEstimate(
  env: WorkerEnv,
  task: Task,
  ctx: TaskContext,
  pool?: WarmPool<WarmRender>,
): Promise<void> {
  const takenAt = Date.now();
  const rec = ctx.job;
  const est = rec.internal.estimate;
  if (!est || !stillWanted(rec)) return;
  const fail = (reason: string) =>
    saveEstimate(env.jobs, rec.job.id, est.startedAt, {
      state: 'failed',
      reason,
      finishedAt: new Date().toISOString(),
    });
  try {
    await sample(env, task, ctx, { rec, est, takenAt, pool }, fail);
  } catch (err) {
    // A cancel or a lost lease: the runtime's to handle (the estimate was canceled, or another slot takes it).
    if (ctx.signal.aborted) throw err;
    ctx.log.warn({ err }, 'estimate failed');
    // A scene that fails to load or render fails the estimate, in one sentence; the job stays validated.
    // The worker's own folders are not the client's to see (as in a job's failedReason).
    const msg = redactPaths((err as Error).message.split('\n')[0]!, [env.settings.workRoot]).replace(/\.$/, '');
    await fail(`The sample frames could not be rendered: ${msg}.`);
  }
}

/** What sample() works on: the job, its estimate, and when the task was taken (its Blender's wait counts from it). */
interface Sampling {
  rec: JobRecord;
  est: EstimateInternal;
  takenAt: number;
  /** The slots' warm Blenders (warm mode): the samples' Blender is kept there for the render. */
  pool: WarmPool<WarmRender> | undefined;
}

async function sample(
  env: WorkerEnv,
  task: Task,
  ctx: TaskContext,
  { rec, est, takenAt, pool }: Sampling,
  fail: (reason: string) => Promise<boolean>,
): Promise<void> {
  const scene = rec.job.analysis?.output;
  const file =
    scene && (parseRequestedVersion(scene.hostFileVersion) ?? parseRequestedVersion(scene.hostVersionForRender));
  if (!scene || !file)
    return void (await fail('The job has no analysis that says which Blender saved the file: validate it again.'));
  const route = await routeBlender(env, file, parseRequestedVersion(est.requestedConfig.hostVersionForRender));
  if (route.where === 'nowhere') return void (await fail(route.message));
  if (route.where === 'elsewhere') {
    // As planning does: handed on to a worker with a fitting Blender (the id names the requirement).
    const suffix = (route.requires.blender ?? route.requires.opens ?? 'any').replace(/\./g, '_');
    const payload = { estimate: true, requires: route.requires };
    const id = `${task.id}:${suffix}`;
    return void (await env.queue.enqueue({ id, jobId: rec.job.id, kind: 'render-chunk', payload, ...sched(rec) }));
  }
  const caps = await env.capabilities(route.build);
  const { finalConfig: final, frames } = resolveFinalConfig(
    scene,
    rec.job.analysis?.config ?? {},
    est.requestedConfig,
    caps,
  );
  if (frames.length === 0) return void (await fail('The frame ranges select no frame.'));
  const project = await prepareProject(rec, {
    storage: env.storage,
    workRoot: env.settings.workRoot,
    signal: ctx.signal,
    blobCache: env.blobCache,
    ...(env.settings.unpackLimits ? { limits: env.settings.unpackLimits } : {}),
  });
  // Its own folder: attempts, finished files and its run log (its own cost) stay apart from the
  // render's, and from an earlier estimate's of another request.
  const own = { ...project, jobDir: path.join(project.jobDir, 'estimate', String(Date.parse(est.startedAt))) };
  // Made here: its Blender's attempt folder may be in the job's own folder (kept for the render).
  await mkdir(own.jobDir, { recursive: true });
  const plan = {
    blender: route.build.binary,
    blenderVersion: minorVersion(route.build),
    chunkTaskIds: [],
    frames: frames.length,
    slots: 1,
  };
  const measured: FrameStat[] = [];
  // The job is `validated`: no progress counters; frame rows are written and watched.
  const quiet: WorkerEnv = {
    ...env,
    // The store as it is (status writes still go through job-lifecycle's moves), minus progress.
    jobs: {
      getById: env.jobs.getById.bind(env.jobs),
      transition: env.jobs.transition.bind(env.jobs),
      update: env.jobs.update.bind(env.jobs),
      setProgress: async () => undefined,
    },
    frameStats: {
      recordFrames: async (rows) => {
        measured.push(...rows);
        await env.frameStats?.recordFrames(rows);
      },
    },
  };
  const tracker = new ProgressTracker({ jobId: rec.job.id, frames, slots: 1 });
  const thumbnails = sampleThumbnails(env, rec, est, own.jobDir);
  const run = new JobRun(quiet, {
    jobId: rec.job.id,
    final,
    plan,
    requested: est.requestedConfig,
    status: 'validated',
    project: own,
    tracker,
    thumbnails,
  });
  try {
    const steps = stepFrames(scene.animations, frames);
    await sampleFrames(env, task, ctx, est, { run, project, frames, measured, takenAt, steps }, pool);
  } finally {
    run.close();
  }
}

/**
 * The render slots' handler, with estimate tasks sent to runEstimate. `pool`: the warm slots'
 * Blenders (warm mode), where an estimate's Blender waits for its render. Default none: it ends
 * with the estimate.
 */
export function withEstimates(env: WorkerEnv, handler: TaskHandler, pool?: WarmPool<WarmRender>): TaskHandler {
  return (task, ctx) => (isEstimateTask(task) ? runEstimate(env, task, ctx, pool) : handler(task, ctx));
}
