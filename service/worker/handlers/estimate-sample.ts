// The worker's part of an estimate (extension estimate): on a render slot, with the job's real
// settings (the request resolved as the render's plan would: render-plan.ts), it renders first,
// middle and last frame, then frames between samples whose times differ, each in a Blender run of
// its own so each run measures a scene load; on a long job each with its next frame, which is the
// sample (warm, as the render's frames are: estimate-samples.ts). Frames go through the chunked render path
// (render/chunk-run.ts's renderPart: same settings, parser, frame statistics) into a folder of
// their own; their files are kept in storage for the render to copy (outputs/estimate-frames.ts). The job stays `validated`: its
// progress is not written, and its status never moves here.
import path from 'node:path';
import { parseRequestedVersion, minorVersion } from '../../../blender/builds.js';
import type { EstimateInternal } from '../../domain/estimate-state.js';
import {
  firstSampleFrames,
  pairPartner,
  refineSampleFrames,
  WARM_PAIR_MIN_FRAMES,
} from '../../domain/estimate-samples.js';
import { resolveFinalConfig } from '../../domain/final-config.js';
import { formatFrameRanges } from '../../domain/frame-ranges.js';
import { normalizedSeconds } from '../../domain/normalized-seconds.js';
import type { FrameStat } from '../../ports/frame-stats.js';
import type { JobRecord, WorkerJobStore } from '../../ports/jobs.js';
import type { Task } from '../../ports/tasks.js';
import { estimatePrefix, keepEstimateFiles } from '../outputs/estimate-frames.js';
import { readRunsFile, RENDER_SECONDS_FILE } from '../outputs/frame-staging.js';
import { prepareProject } from '../project/job-files.js';
import { routeBlender } from '../runtime/blender-route.js';
import { redactPaths } from '../runtime/failed-reason.js';
import type { WorkerEnv } from '../runtime/env.js';
import type { TaskContext, TaskHandler } from '../runtime/runtime.js';
import { renderPart } from '../render/chunk-run.js';
import { JobRun } from '../render/job-run.js';
import { ProgressTracker } from '../render/progress-tracker.js';

/** Frames added after the first pass at most, where frame times differ. */
export const MAX_REFINE_FRAMES = 2;

/** Whether a task is an estimate's (it travels as a render-chunk task so that render slots take it). */
export const isEstimateTask = (task: Pick<Task, 'id'>) => task.id.startsWith('estimate:');

/** Writes the estimate's state unless it was canceled (or replaced) meanwhile. */
async function saveEstimate(
  jobs: WorkerJobStore,
  jobId: string,
  startedAt: string,
  patch: Partial<EstimateInternal>,
): Promise<boolean> {
  const now = await jobs.getById(jobId);
  const est = now?.internal.estimate;
  if (!now || !est || est.startedAt !== startedAt || est.state !== 'sampling') return false;
  await jobs.update(jobId, {}, { estimate: { ...est, ...patch } });
  return true;
}

const stillWanted = (rec: JobRecord | undefined) =>
  !!rec &&
  rec.job.status === 'validated' &&
  !rec.internal.renderRequestedAt &&
  rec.internal.estimate?.state === 'sampling';

/**
 * Runs the job's estimate. Whatever goes wrong fails the estimate, never the task: a failed task
 * would fail the job, and a spec client's validated job must not fail for an estimate.
 */
export async function runEstimate(env: WorkerEnv, task: Task, ctx: TaskContext): Promise<void> {
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
    await sample(env, task, ctx, rec, est, fail);
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

async function sample(
  env: WorkerEnv,
  task: Task,
  ctx: TaskContext,
  rec: JobRecord,
  est: EstimateInternal,
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
    await env.queue.enqueue({
      id: `${task.id}:${suffix}`,
      jobId: rec.job.id,
      kind: 'render-chunk',
      payload: { estimate: true, requires: route.requires },
    });
    return;
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
  const run = new JobRun(quiet, {
    jobId: rec.job.id,
    final,
    plan,
    requested: est.requestedConfig,
    status: 'validated',
    project: own,
    tracker,
  });
  try {
    await sampleFrames(env, task, ctx, est, run, frames, measured);
  } finally {
    run.close();
  }
}

/** Renders the sample frames one Blender run each, saving the estimate after each. */
async function sampleFrames(
  env: WorkerEnv,
  task: Task,
  ctx: TaskContext,
  est: EstimateInternal,
  run: JobRun,
  frames: number[],
  measured: FrameStat[],
): Promise<void> {
  const rec = ctx.job;
  const prefix = estimatePrefix(rec.job.workspaceId, rec.job.id, est.startedAt);
  const done: number[] = [];
  const samples: NonNullable<EstimateInternal['samples']> = [];
  const loads: number[] = [];
  const bytes: number[] = [];
  const renderOne = async (frame: number) => {
    // A long job's sample renders with a neighbour, in the job's order; the later of the two is warm and is the sample.
    const partner = frames.length >= WARM_PAIR_MIN_FRAMES ? pairPartner(frames, frame, new Set(done)) : null;
    const pair = partner === null ? [frame] : [Math.min(frame, partner), Math.max(frame, partner)];
    const t0 = Date.now();
    const before = measured.length;
    const part = { start: pair[0]!, end: pair.at(-1)!, step: pair.length > 1 ? pair[1]! - pair[0]! : 1, frames: pair };
    await renderPart(run, task, ctx, part);
    const rows = pair.map((f) => measured.slice(before).find((r) => r.frame === f));
    const missing = pair.find((_, i) => !rows[i]);
    if (missing !== undefined) throw new Error(`Blender finished without writing frame ${missing}`);
    const warm = rows.at(-1)!;
    // All the run took beyond its frames at the warm pace is its load: start, scene, the first frame's warm-up.
    loads.push(Math.max(0, (Date.now() - t0) / 1000 - warm.renderSeconds * pair.length));
    const kept = await keepEstimateFiles(env.storage, prefix, run.out, pair);
    done.push(...pair);
    const peaks = rows.map((r) => r!.peakMemoryBytes).filter((p): p is number => p !== null);
    samples.push({
      frame: warm.frame,
      seconds: warm.renderSeconds,
      peakMemoryBytes: peaks.length ? Math.max(...peaks) : null,
      device: warm.device,
    });
    bytes.push(...pair.map((f) => kept.get(f) ?? 0));
    const runs = await readRunsFile(path.join(run.project.jobDir, RENDER_SECONDS_FILE), 'CPU');
    return saveEstimate(env.jobs, rec.job.id, est.startedAt, {
      frames: [...done],
      samples: [...samples],
      frameRanges: formatFrameRanges(frames),
      loadSeconds: [...loads],
      outputBytes: [...bytes],
      ownSeconds: Math.round(runs.reduce((s, r) => s + r.seconds, 0) * 10) / 10,
      ownNormalizedSeconds: normalizedSeconds(runs),
      blenderVersion: run.plan.blenderVersion,
    });
  };
  for (const f of firstSampleFrames(frames)) if (!done.includes(f) && !(await renderOne(f))) return;
  const times = samples.map((r) => ({ frame: r.frame, seconds: r.seconds }));
  for (const f of refineSampleFrames(frames, times, MAX_REFINE_FRAMES))
    if (!done.includes(f) && !(await renderOne(f))) return;
  await saveEstimate(env.jobs, rec.job.id, est.startedAt, { state: 'ready', finishedAt: new Date().toISOString() });
  ctx.log.info({ frames: done }, 'estimate sampled');
}

/** The render slots' handler, with estimate tasks sent to runEstimate. */
export function withEstimates(env: WorkerEnv, handler: TaskHandler): TaskHandler {
  return (task, ctx) => (isEstimateTask(task) ? runEstimate(env, task, ctx) : handler(task, ctx));
}
