// Renders an estimate's sample frames (extension estimate) in one warm Blender
// (render/warm-render.ts, as a warm render's slot does: same settings, parser, frame statistics),
// so the run measures one scene load and the samples are warm as the render's frames are; one run
// in place of one per sample also keeps the estimate's own cost down. Which frames, in which
// order: estimate-samples.ts. Their files are kept in storage for the render to copy
// (outputs/estimate-frames.ts), and the estimate is saved after each step. In warm mode the
// Blender then stays in the slot's WarmPool for a while, and the job's render, asked with the same
// settings, renders its first frames in it: one scene load and one shader warm-up for both.
import path from 'node:path';
import type { EstimateInternal } from '../../domain/estimate-state.js';
import type { LeadWarmup } from '../../domain/estimate-takeover.js';
import {
  firstCalls,
  leadCosts,
  leadFrames,
  REFINE_SHARE,
  refineSampleFrames,
  runUpFrame,
  runUpPairs,
  sampleBudget,
  steppedRuns,
} from '../../domain/estimate-samples.js';
import { fullRenderSeconds, profileValue } from '../../domain/frame-profile.js';
import { formatFrameRanges } from '../../domain/frame-ranges.js';
import { normalizedSeconds } from '../../domain/normalized-seconds.js';
import type { FrameStat } from '../../ports/frame-stats.js';
import type { JobRecord } from '../../ports/jobs.js';
import type { Task } from '../../ports/tasks.js';
import { estimatePrefix, keepEstimateFiles } from '../outputs/estimate-frames.js';
import { FrameThumbnails } from '../outputs/thumbnails.js';
import { readRunsFile, RENDER_SECONDS_FILE } from '../outputs/frame-staging.js';
import type { WorkerEnv } from '../runtime/env.js';
import type { TaskContext } from '../runtime/runtime.js';
import { planBinary } from './blender-setup.js';
import type { JobRun } from './job-run.js';
import type { PreparedProject } from '../project/job-files.js';
import type { WarmPool } from '../runtime/warm-pool.js';
import { handOverLoad } from './estimate-handover.js';
import { warmKey } from './warm-key.js';
import { WarmRender } from './warm-render.js';
import { saveEstimate } from './estimate-save.js';

/**
 * Thumbnails of the sample frames, stored with the estimate's files: a render's warm slot makes one
 * (ffmpeg) beside Blender after each frame, and on a small machine that costs the render's frames
 * time the samples must pay too (without it the Sculpting template's samples took 0.11 s a frame, the
 * render's 0.17 s).
 */
export function sampleThumbnails(
  env: WorkerEnv,
  rec: JobRecord,
  est: EstimateInternal,
  workDir: string,
): FrameThumbnails {
  const ffmpeg = env.settings.ffmpeg ? { ffmpeg: { ffmpegPath: env.settings.ffmpeg } } : {};
  const prefix = estimatePrefix(rec.job.workspaceId, rec.job.id, est.startedAt);
  return new FrameThumbnails({ storage: env.storage, prefix, workDir, ...ffmpeg });
}

/** The run the samples render in, the job's frames, the rows measured so far, and when the task was taken. */
export interface SampleSetup {
  run: JobRun;
  /** The job's own project (the render's): where a Blender kept for the render keeps its attempt folder. */
  project: PreparedProject;
  frames: number[];
  /** Filled as Blender's frames are recorded. */
  measured: FrameStat[];
  /** Date.now() when the task was taken: the wait until its Blender starts is the render's fixed cost too. */
  takenAt: number;
  /** Frames at which an animated integer property steps (frame-steps.ts): samples go to distinct segments. */
  steps: number[];
}

/**
 * Renders the sample frames in one warm Blender, saving the estimate after each. With `pool` (warm
 * mode) and a keep time, that Blender then waits in the slot's pool, under the key of the render of
 * the same request (warm-key.ts), for estimateWarmKeepMs: the render's first frames on this slot
 * skip the scene load and shader warm-up. A canceled or failed estimate's Blender ends with it.
 */
export async function sampleFrames(
  env: WorkerEnv,
  task: Task,
  ctx: TaskContext,
  est: EstimateInternal,
  setup: SampleSetup,
  pool?: WarmPool<WarmRender>,
): Promise<void> {
  const { run, takenAt } = setup;
  const keepMs = pool ? env.settings.estimateWarmKeepMs : 0;
  const binary = planBinary(env, run.plan);
  let t0 = Date.now();
  // What the lead measured, for the render that takes the Blender over: it pays no second warm-up.
  let lead: LeadWarmup | null = null;
  const start = () => {
    t0 = Date.now();
    // Kept for the render: the job's own folder, and the render that takes it over takes its load.
    const handOver = handOverLoad(env, ctx.job.job.id, est.startedAt, () => lead);
    const kept = keepMs > 0 ? { project: setup.project, handOver } : {};
    return WarmRender.start({
      env: run.env,
      run,
      lane: ctx.lane.name,
      slot: ctx.lane.slot,
      binary,
      log: ctx.log,
      ...kept,
    });
  };
  const sampleIn = async (warm: WarmRender) => {
    let sampled: number[] | undefined;
    try {
      await warm.setup;
      // One load, as each slot of a warm render pays it: start, scene, settings.
      const load = (Date.now() - t0) / 1000;
      const prepare = (t0 - takenAt) / 1000;
      const onLead = (l: LeadWarmup) => (lead = l);
      sampled = await renderSamples(env, task, ctx, est, { ...setup, warm, load, prepare, onLead });
    } finally {
      if (!sampled || keepMs <= 0) {
        warm.kill();
        await warm.ended;
      }
    }
    return sampled;
  };
  let sampled: number[] | undefined;
  if (pool && keepMs > 0) {
    const jobId = ctx.job.job.id;
    // Its own load, measured: a Blender of an earlier estimate of the job (another request) goes first.
    await pool.endJob(jobId, 'a new estimate of its job loads the scene');
    sampled = await pool.use(ctx.lane.name, warmKey(run, binary), jobId, start, sampleIn, { keepMs });
  } else sampled = await sampleIn(start());
  // Ready once Blender is gone or kept idle for the render: the slot reads free to whoever reads the estimate then.
  if (!sampled) return;
  await saveEstimate(env.jobs, ctx.job.job.id, est.startedAt, { state: 'ready', finishedAt: new Date().toISOString() });
  ctx.log.info({ frames: sampled, keptMs: keepMs }, 'estimate sampled');
}

interface SampleRun extends Omit<SampleSetup, 'takenAt' | 'project'> {
  warm: WarmRender;
  load: number;
  /** Seconds from the task taken to its Blender's start. */
  prepare: number;
  /** Told what the lead measured, once it has. */
  onLead: (lead: LeadWarmup) => void;
}

/**
 * The lead (cold), the spread samples (one stepped call behind one run-up where it fits: firstCalls),
 * then refinement one at a time, each behind its run-up, where neighbours differ, while the
 * estimate's own seconds stay within REFINE_SHARE of the full render the samples predict
 * (estimate-samples.ts says why these calls).
 */
async function renderSamples(
  env: WorkerEnv,
  task: Task,
  ctx: TaskContext,
  est: EstimateInternal,
  { run, warm, frames, measured, load, prepare, steps, onLead }: SampleRun,
): Promise<number[] | undefined> {
  const rec = ctx.job;
  const prefix = estimatePrefix(rec.job.workspaceId, rec.job.id, est.startedAt);
  const done: number[] = [];
  const samples: NonNullable<EstimateInternal['samples']> = [];
  const bytes: number[] = [];
  let costs: ReturnType<typeof leadCosts> = null;
  // Frames handed to Blender together, as a render's queued runs are: Blender goes from one to the
  // next while the worker stores the last one's files and thumbnails, so the samples share the
  // cores as the render's frames do. Each list is one render call (split where its steps differ).
  const renderMany = async (...calls: (readonly number[])[]) => {
    const before = measured.length;
    const list = calls.flat();
    await Promise.all(calls.flatMap(steppedRuns).map((r) => warm.render(run, r, task, ctx, false)));
    const rows = list.map((f) => measured.slice(before).find((r) => r.frame === f));
    const missing = list.find((_, i) => !rows[i]);
    if (missing !== undefined) throw new Error(`Blender finished without writing frame ${missing}`);
    const kept = await keepEstimateFiles(env.storage, prefix, run.out, list);
    done.push(...list);
    bytes.push(...list.map((f) => kept.get(f) ?? 0));
    return rows as FrameStat[];
  };
  const ownSeconds = async () => (await ownRuns(run)).reduce((s, r) => s + r.seconds, 0);
  const save = async () =>
    saveEstimate(env.jobs, rec.job.id, est.startedAt, {
      ...measuredPatch(await ownRuns(run), { frames, load, prepare, costs }),
      frames: [...done],
      samples: [...samples],
      outputBytes: [...bytes],
      blenderVersion: run.plan.blenderVersion,
      ...(steps.length ? { steps } : {}),
    });
  const addSample = (r: FrameStat) =>
    samples.push({ frame: r.frame, seconds: r.renderSeconds, peakMemoryBytes: r.peakMemoryBytes, device: r.device });
  const lead = leadFrames(frames);
  // A refined sample behind its run-up, the two one call; alone where it has none (a short job, a taken frame).
  const withRunUp = (f: number) => {
    const up = runUpFrame(frames, f, new Set([...done, ...lead]));
    return up !== null ? [up, f] : [f];
  };
  const plan = firstCalls(frames, steps, run.final.renderEngine !== 'CYCLES');
  const byFrame = new Map((await renderMany(...plan.calls)).map((r) => [r.frame, r] as const));
  const took = (f: number) => byFrame.get(f)!.renderSeconds;
  for (const f of plan.samples) addSample(byFrame.get(f)!);
  costs = leadCosts(lead.map(took), runUpPairs(plan, took, steps));
  if (costs) onLead({ warmupSeconds: costs.warmupSeconds, leadSeconds: lead.map(took) });
  // Undefined once a save finds the estimate canceled or replaced: nothing more is written.
  if (!(await save())) return undefined;
  const setup = costs?.callSeconds ?? 0;
  for (let budget = sampleBudget(frames.length) - done.length; budget > 0;) {
    const times = samples.map((r) => ({ frame: r.frame, seconds: r.seconds }));
    const next = refineSampleFrames(frames, times, 1, steps).find((f) => !done.includes(f));
    if (next === undefined) break;
    const call = withRunUp(next);
    // The full render as the samples predict it: every frame, its calls' setups, a warm-up.
    const full = fullRenderSeconds(frames, times, setup, costs?.warmupSeconds ?? 0, steps);
    const dear = (profileValue(times, next, steps) ?? 0) * call.length + setup;
    if ((await ownSeconds()) + dear > REFINE_SHARE * full || call.length > budget) break;
    budget -= call.length;
    addSample((await renderMany(call)).at(-1)!);
    if (!(await save())) return undefined;
  }
  return done;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** The estimate run's own Blender runs so far (its load and frames), as billing reads them. */
const ownRuns = (run: JobRun) => readRunsFile(path.join(run.project.jobDir, RENDER_SECONDS_FILE), 'CPU');

/** What the run measured besides its frames: the job's frames, load, warm-up, call setup, wait and own cost. */
function measuredPatch(
  runs: Awaited<ReturnType<typeof ownRuns>>,
  m: { frames: number[]; load: number; prepare: number; costs: ReturnType<typeof leadCosts> },
): Partial<EstimateInternal> {
  return {
    frameRanges: formatFrameRanges(m.frames),
    loadSeconds: [round2(m.load)],
    warmupSeconds: m.costs ? [round2(m.costs.warmupSeconds)] : [],
    callSeconds: m.costs ? [round2(m.costs.callSeconds)] : [],
    prepareSeconds: [round2(m.prepare)],
    ownSeconds: Math.round(runs.reduce((s, r) => s + r.seconds, 0) * 10) / 10,
    ownNormalizedSeconds: normalizedSeconds(runs),
  };
}
