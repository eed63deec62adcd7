// The worker's part of an estimate (extension estimate): on a render slot, with the job's real
// settings (the request resolved as the render's plan would: render-plan.ts), it renders the
// sample frames (estimate-samples.ts) in one warm Blender (render/warm-render.ts, as a warm
// render's slot does: same settings, parser, frame statistics), so the run measures one scene load
// and the samples are warm as the render's frames are; one run in place of one per sample also
// keeps the estimate's own cost down. Frames land in a folder of their own; their files are kept
// in storage for the render to copy (outputs/estimate-frames.ts). The job stays `validated`: its
// progress is not written, and its status never moves here.
import { taskScheduling } from '../../domain/scheduling.js';
import path from 'node:path';
import { parseRequestedVersion, minorVersion } from '../../../blender/builds.js';
import type { EstimateInternal } from '../../domain/estimate-state.js';
import {
  firstSampleFrames,
  leadFrame,
  refineSampleFrames,
  runUpFrame,
  sampleBudget,
} from '../../domain/estimate-samples.js';
import { resolveFinalConfig } from '../../domain/final-config.js';
import { formatFrameRanges } from '../../domain/frame-ranges.js';
import { normalizedSeconds } from '../../domain/normalized-seconds.js';
import type { FrameStat } from '../../ports/frame-stats.js';
import type { JobRecord, WorkerJobStore } from '../../ports/jobs.js';
import type { Task } from '../../ports/tasks.js';
import { estimatePrefix, keepEstimateFiles } from '../outputs/estimate-frames.js';
import { FrameThumbnails } from '../outputs/thumbnails.js';
import { readRunsFile, RENDER_SECONDS_FILE } from '../outputs/frame-staging.js';
import { prepareProject } from '../project/job-files.js';
import { routeBlender } from '../runtime/blender-route.js';
import { redactPaths } from '../runtime/failed-reason.js';
import type { WorkerEnv } from '../runtime/env.js';
import type { TaskContext, TaskHandler } from '../runtime/runtime.js';
import { planBinary } from '../render/blender-setup.js';
import { JobRun } from '../render/job-run.js';
import { ProgressTracker } from '../render/progress-tracker.js';
import { WarmRender } from '../render/warm-render.js';

/** The job's priority and fair-share group, for the tasks this hands on (extension scheduling). */
const sched = (rec: JobRecord) => taskScheduling(rec.job);

/** Frames added after the first pass at most, where frame times differ. */
export const MAX_REFINE_FRAMES = 3;

/**
 * When each estimate task was taken: the time until its Blender starts (the project fetched and
 * unpacked, the plan) is a fixed cost each slot of the render pays too (estimate-figures.ts's
 * overheadSeconds). Kept beside the task rather than passed through sample(), which is at its length.
 */
const takenAt = new WeakMap<Task, number>();

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
  takenAt.set(task, Date.now());
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
    await sampleFrames(env, task, ctx, est, run, frames, measured);
  } finally {
    run.close();
  }
}

/**
 * Thumbnails of the sample frames, stored with the estimate's files: a render's warm slot makes one
 * (ffmpeg) beside Blender after each frame, and on a small machine that costs the render's frames
 * time the samples must pay too (without it the Sculpting template's samples took 0.11 s a frame, the
 * render's 0.17 s).
 */
function sampleThumbnails(env: WorkerEnv, rec: JobRecord, est: EstimateInternal, workDir: string): FrameThumbnails {
  const ffmpeg = env.settings.ffmpeg ? { ffmpeg: { ffmpegPath: env.settings.ffmpeg } } : {};
  const prefix = estimatePrefix(rec.job.workspaceId, rec.job.id, est.startedAt);
  return new FrameThumbnails({ storage: env.storage, prefix, workDir, ...ffmpeg });
}

/** Renders the sample frames in one warm Blender, saving the estimate after each. */
async function sampleFrames(
  env: WorkerEnv,
  task: Task,
  ctx: TaskContext,
  est: EstimateInternal,
  run: JobRun,
  frames: number[],
  measured: FrameStat[],
): Promise<void> {
  const t0 = Date.now();
  const prepare = (t0 - (takenAt.get(task) ?? t0)) / 1000;
  const warm = WarmRender.start({
    env: run.env,
    run,
    lane: ctx.lane.name,
    slot: ctx.lane.slot,
    binary: planBinary(env, run.plan),
    log: ctx.log,
  });
  let sampled: number[] | undefined;
  try {
    await warm.setup;
    // One load, as each slot of a warm render pays it: start, scene, settings.
    const load = (Date.now() - t0) / 1000;
    sampled = await renderSamples(env, task, ctx, est, { run, warm, frames, measured, load, prepare });
  } finally {
    warm.kill();
    await warm.ended;
  }
  // Ready once Blender is gone: the slot reads free to whoever reads the estimate then.
  if (!sampled) return;
  await saveEstimate(env.jobs, ctx.job.job.id, est.startedAt, { state: 'ready', finishedAt: new Date().toISOString() });
  ctx.log.info({ frames: sampled }, 'estimate sampled');
}

interface SampleRun {
  run: JobRun;
  warm: WarmRender;
  frames: number[];
  measured: FrameStat[];
  load: number;
  /** Seconds from the task taken to its Blender's start. */
  prepare: number;
}

/** The lead frame (cold), the first pass, then refinement one frame at a time where neighbours differ. */
async function renderSamples(
  env: WorkerEnv,
  task: Task,
  ctx: TaskContext,
  est: EstimateInternal,
  { run, warm, frames, measured, load, prepare }: SampleRun,
): Promise<number[] | undefined> {
  const rec = ctx.job;
  const prefix = estimatePrefix(rec.job.workspaceId, rec.job.id, est.startedAt);
  const done: number[] = [];
  const samples: NonNullable<EstimateInternal['samples']> = [];
  const bytes: number[] = [];
  let cold: FrameStat | undefined;
  // Frames handed to Blender together, as a render's queued runs are: Blender goes from one to the
  // next while the worker stores the last one's files and thumbnails, so the samples share the
  // cores as the render's frames do (handed one at a time, they would have them to themselves).
  const renderMany = async (list: readonly number[]) => {
    const before = measured.length;
    // A run-up and its sample are one render call, as a render's chunk is: a call of its own sets
    // the engine up again (EEVEE: 2.3 s a sample against 0.6 s a frame of the render's runs).
    const runs: { start: number; end: number; step: number }[] = [];
    for (const f of list) {
      const last = runs.at(-1);
      if (last && f === last.end + 1) last.end = f;
      else runs.push({ start: f, end: f, step: 1 });
    }
    await Promise.all(runs.map((r) => warm.render(run, r, task, ctx, false)));
    const rows = list.map((f) => measured.slice(before).find((r) => r.frame === f));
    const missing = list.find((_, i) => !rows[i]);
    if (missing !== undefined) throw new Error(`Blender finished without writing frame ${missing}`);
    const kept = await keepEstimateFiles(env.storage, prefix, run.out, list);
    done.push(...list);
    bytes.push(...list.map((f) => kept.get(f) ?? 0));
    return rows as FrameStat[];
  };
  const save = async () => {
    const runs = await readRunsFile(path.join(run.project.jobDir, RENDER_SECONDS_FILE), 'CPU');
    // The cold frame's excess over the first warm sample is the warm-up each render slot pays once.
    const warmup = cold && samples[0] ? [Math.max(0, cold.renderSeconds - samples[0].seconds)] : [];
    return saveEstimate(env.jobs, rec.job.id, est.startedAt, {
      frames: [...done],
      samples: [...samples],
      frameRanges: formatFrameRanges(frames),
      loadSeconds: [Math.round(load * 100) / 100],
      warmupSeconds: warmup,
      prepareSeconds: [Math.round(prepare * 100) / 100],
      outputBytes: [...bytes],
      ownSeconds: Math.round(runs.reduce((s, r) => s + r.seconds, 0) * 10) / 10,
      ownNormalizedSeconds: normalizedSeconds(runs),
      blenderVersion: run.plan.blenderVersion,
    });
  };
  const addSamples = async (rows: readonly FrameStat[]) => {
    for (const r of rows)
      samples.push({ frame: r.frame, seconds: r.renderSeconds, peakMemoryBytes: r.peakMemoryBytes, device: r.device });
    return save();
  };
  // The lead, then each sample behind its run-up, handed to Blender together.
  const lead = leadFrame(frames);
  const batch: number[] = lead !== null ? [lead] : [];
  const first = firstSampleFrames(frames);
  for (const f of first) {
    const up = runUpFrame(frames, f, new Set(batch));
    batch.push(...(up !== null ? [up, f] : [f]));
  }
  const byFrame = new Map((await renderMany(batch)).map((r) => [r.frame, r] as const));
  if (lead !== null) cold = byFrame.get(lead);
  // Undefined once a save finds the estimate canceled or replaced: nothing more is written.
  if (!(await addSamples(first.map((f) => byFrame.get(f)!)))) return undefined;
  // One at a time: a gap split once may still hold the steepest change (subdivision's last levels).
  const budget = sampleBudget(frames.length);
  for (let i = 0; i < MAX_REFINE_FRAMES; i++) {
    const times = samples.map((r) => ({ frame: r.frame, seconds: r.seconds }));
    const next = refineSampleFrames(frames, times, 1).find((f) => !done.includes(f));
    if (next === undefined) break;
    const up = runUpFrame(frames, next, new Set(done));
    const list = up !== null ? [up, next] : [next];
    if (done.length + list.length > budget) break;
    if (!(await addSamples((await renderMany(list)).slice(-1)))) return undefined;
  }
  return done;
}

/** The render slots' handler, with estimate tasks sent to runEstimate. */
export function withEstimates(env: WorkerEnv, handler: TaskHandler): TaskHandler {
  return (task, ctx) => (isEstimateTask(task) ? runEstimate(env, task, ctx) : handler(task, ctx));
}
