// One render chunk: one Blender process renders a run of frames (a process start costs ~1.6 s,
// so never one per frame). Progress is parsed from Blender's output as it comes; a frame's files
// move into the job's `out/` folder as soon as Blender finishes the frame. A crash or a hang is
// retryable, and the retry renders only the frames that are not in `out/` yet.
import { appendFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import type { RequestedConfig } from '../../../shared/api/render-config.js';
import type { JobStatus } from '../../../shared/job-status.js';
import { expandFrameRanges, remainingChunk, type FrameChunk } from '../../domain/frame-ranges.js';
import { moveJob } from '../../domain/job-lifecycle.js';
import { taskPayload, type ChunkPayload } from '../../domain/tasks.js';
import type { JobInternal } from '../../ports/jobs.js';
import type { Task } from '../../ports/tasks.js';
import { BlenderRunError } from '../../../blender/errors.js';
import { runBlender, type BlenderRunResult } from '../../../blender/run.js';
import { attemptLayout, filesOfFrame, finishedFrames, outputLayout, promoteFinished, type OutputLayout } from '../outputs/chunk-files.js';
import { dropDamagedFrames } from '../outputs/frame-integrity.js';
import type { WorkerEnv } from '../runtime/env.js';
import { prepareProject, projectFilePath, type PreparedProject } from '../project/job-files.js';
import { resolveBundledAddons } from '../project/project-files.js';
import { FatalTaskError, RetryableTaskError } from '../runtime/outcomes.js';
import { BlenderLogParser } from '../../../blender/render/progress-parser.js';
import { ProgressTracker } from './progress-tracker.js';
import { renderInvocation } from '../../../blender/render/render-invocation.js';
import { parseSetupLine, renderSettingsFrom } from '../../../blender/render/render-settings.js';
import { parseDeviceLine, type DeviceReport } from '../../../blender/render/device-report.js';
import { billedRun, formatRunLine } from '../../domain/normalized-seconds.js';
import type { TaskContext, TaskHandler } from '../runtime/runtime.js';
import { RENDER_SECONDS_FILE } from './finalize.js';
import { reportSetupWarnings } from './job-run.js';
import { FrameStaging, stagingPrefix } from '../outputs/frame-staging.js';
import { buildFor } from '../runtime/placement.js';

/** How often progress counters are written while frames render. */
const PROGRESS_EVERY_MS = 500;

/** Per-job progress shared by the chunks of a job running in this process. */
class JobTrackers {
  private readonly byJob = new Map<string, { tracker: ProgressTracker; users: number }>();

  async acquire(jobId: string, make: () => Promise<ProgressTracker>): Promise<ProgressTracker> {
    let e = this.byJob.get(jobId);
    if (!e) {
      e = { tracker: await make(), users: 0 };
      this.byJob.set(jobId, e);
    }
    e.users++;
    return e.tracker;
  }

  release(jobId: string): void {
    const e = this.byJob.get(jobId);
    if (e && --e.users <= 0) this.byJob.delete(jobId);
  }
}

export function renderChunkHandler(env: WorkerEnv): TaskHandler {
  const trackers = new JobTrackers();
  return async (task, ctx) => {
    const rec = await env.jobs.getById(task.jobId);
    if (!rec || (rec.job.status !== 'booting' && rec.job.status !== 'rendering')) return;
    const final = rec.job.finalConfig;
    const plan = rec.internal.render;
    if (!final || !plan) throw FatalTaskError.render('NOT_PLANNED', 'The render has no plan; start it again.');
    let chunk: ChunkPayload;
    try {
      chunk = taskPayload({ ...task, kind: 'render-chunk' });
    } catch (err) {
      throw FatalTaskError.render('BAD_TASK_PAYLOAD', (err as Error).message);
    }
    const project = await prepareProject(rec, {
      storage: env.storage,
      workRoot: env.settings.workRoot,
      signal: ctx.signal,
      blobCache: env.blobCache,
      ...(env.settings.unpackLimits ? { limits: env.settings.unpackLimits } : {}),
    });
    const out = outputLayout(project.jobDir);
    const allFrames = expandFrameRanges(final.frameRanges ?? []);
    const tracker = await trackers.acquire(rec.job.id, async () => {
      const done = await finishedFrames(final, out, allFrames);
      // Frames copied from a requeued job count as done, also where they were staged for another machine.
      return new ProgressTracker({ jobId: rec.job.id, frames: allFrames, slots: plan.slots, doneFrames: [...done, ...expandFrameRanges(plan.copiedFrames ?? [])] });
    });
    const state = { status: rec.job.status };
    const staging = env.settings.stageFrames ? new FrameStaging(env.storage, stagingPrefix(rec.job.id)) : undefined;
    try {
      // Frames another machine finished before it died are fetched, not rendered again.
      if (staging) await staging.fetchMissing(out, new Set(chunk.frames));
      // Files from before this worker started (a restart) count only if a power loss left them whole.
      const { done } = await dropDamagedFrames(final, out, await finishedFrames(final, out, chunk.frames), env.startedAt);
      for (const part of remainingChunk(chunk, done)) {
        await renderPart({ env, ctx, task, final, plan, project, out, part, tracker, state, staging, jobId: rec.job.id, requested: rec.job.requestedConfig ?? {} });
      }
      await staging?.stageFrames(out, new Set(chunk.frames));
      const missing = chunk.frames.filter((f) => !tracker.doneFrames.has(f));
      const stillMissing = missing.length ? [...(await finishedFrames(final, out, missing))] : [];
      const lost = missing.filter((f) => !stillMissing.includes(f));
      if (lost.length) {
        throw new RetryableTaskError(`Blender finished without writing frame ${lost[0]}`, { frames: lost });
      }
    } finally {
      trackers.release(rec.job.id);
    }
  };
}

interface PartRun {
  env: WorkerEnv;
  ctx: TaskContext;
  task: Task;
  final: FinalConfig;
  plan: NonNullable<JobInternal['render']>;
  project: PreparedProject;
  out: OutputLayout;
  part: FrameChunk;
  tracker: ProgressTracker;
  requested: RequestedConfig;
  /** The job's status as this process last set or saw it. */
  state: { status: JobStatus };
  /** Set when other machines may finalize: finished frames are staged in storage as they come. */
  staging: FrameStaging | undefined;
  jobId: string;
}

async function renderPart(r: PartRun): Promise<void> {
  const { env, ctx, final, out, part, tracker, jobId, state } = r;
  const label = `${r.task.id.split(':').pop()}-${r.task.attempts}-${part.start}`;
  const attempt = await attemptLayout(r.project.jobDir, label);
  const device = final.computeDeviceType ?? 'CPU';
  const slot = ctx.lane.slot;
  const gpuUuids = device !== 'CPU' && slot?.gpuUuids.length ? slot.gpuUuids : undefined;
  // Bundled add-ons load from the unpacked project: Blender imports each from the folder holding it.
  const bundled = resolveBundledAddons(r.project.manifest, final.addonsToUse, final.bundledAddonPathsToUse, { root: r.project.root });
  const settings = renderSettingsFrom(final, {
    compositeDir: attempt.composite,
    addonPaths: [...new Set(bundled.map((a) => path.dirname(a.path.replace(/\/__init__\.py$/, ''))))],
    requested: r.requested,
    allowCpuFallback: true,
    pathRemaps: { root: r.project.root, remaps: r.project.manifest?.remaps ?? [] },
    ...(gpuUuids ? { gpuUuids } : {}),
  });
  const settingsFile = path.join(attempt.outDir, 'settings.json');
  await writeFile(settingsFile, JSON.stringify(settings));
  const sceneFile = projectFilePath(r.project, final.pathToFileForRender ?? 'scene.blend');
  const invocation = renderInvocation({
    // This machine's build of the planned version (placement only hands the task to workers that have one).
    binary: buildFor(env.builds, r.plan.blenderVersion)?.binary ?? r.plan.blender,
    sceneFile,
    settingsFile,
    attemptDir: attempt.frames,
    chunk: part,
    deviceType: device,
    ...(final.sceneToRender ? { sceneName: final.sceneToRender } : {}),
    ...(gpuUuids ? { gpuUuids } : {}),
    ...(slot?.threads ? { threads: slot.threads } : {}),
  });

  const parser = new BlenderLogParser();
  const chunkKey = `${r.task.id}:${part.start}`;
  let lastPublish = 0;
  let setupOk = false;
  // What render_setup.py says the run really renders on (CPU when it fell back): that is billed.
  let used: DeviceReport | undefined;
  const setupWarnings: string[] = [];
  const errors: string[] = [];
  // Promotions and status writes happen in order, off Blender's output callback.
  let work: Promise<void> = Promise.resolve();
  const later = (fn: () => Promise<void>) => {
    work = work.then(fn).catch((err: unknown) => ctx.log.warn({ err }, 'chunk bookkeeping failed'));
  };
  const publish = (force = false) => {
    const now = Date.now();
    if (!force && now - lastPublish < PROGRESS_EVERY_MS) return;
    lastPublish = now;
    const snap = tracker.snapshot(state.status);
    later(() => env.jobs.setProgress(snap));
  };

  let result: BlenderRunResult | undefined;
  const t0 = Date.now();
  // Billed time (normalizedSeconds) counts every Blender run: crashed, hung and retried ones too,
  // each with the device it really used.
  const bill = (ms: number) => {
    const run = billedRun(ms / 1000, used);
    return r.staging ? r.staging.addRun(label, run) : appendFile(path.join(r.project.jobDir, RENDER_SECONDS_FILE), `${formatRunLine(run)}\n`);
  };
  try {
    result = await runBlender({
      ...invocation,
      cwd: attempt.outDir,
      timeoutMs: env.settings.chunkTimeoutMs,
      idleTimeoutMs: env.settings.chunkIdleTimeoutMs,
      signal: ctx.signal,
      onSpawn: (pid) => {
        ctx.log.info({ pid, frames: `${part.start}-${part.end}x${part.step}` }, 'blender started');
        ctx.taskLog?.note(`Blender started (pid ${pid}) for frames ${part.start}-${part.end}${part.step > 1 ? ` step ${part.step}` : ''}`);
      },
      onLine: (stream, line) => {
        ctx.taskLog?.line(stream, line);
        used = parseDeviceLine(line) ?? used;
        const setup = parseSetupLine(line);
        if (setup?.type === 'ok') {
          setupOk = true;
          ctx.log.info({ setup: setup.summary }, 'render settings applied');
        } else if (setup) {
          ctx.log.warn({ setup: setup.message }, `render setup ${setup.type}`);
          if (setup.type === 'warning') setupWarnings.push(setup.message);
          // Printed before Python's own "Error: Python: Traceback...": the first error says what to fix.
          if (setup.type === 'error') errors.push(setup.message);
        }
        for (const ev of parser.line(line)) {
          if (ev.type === 'frameStarted' && state.status === 'booting') {
            state.status = 'rendering';
            later(async () => {
              await moveJob(env.jobs, jobId, 'markRendering');
            });
          }
          if (ev.type === 'error') errors.push(ev.message);
          if (ev.type === 'frameFinished') {
            // The frame counts as done only once all its files are safely in out/.
            const frame = ev.frame;
            later(async () => {
              await promoteFinished(attempt, out, frame);
              const camera = filesOfFrame(final, frame).filter((f) => f.kind === 'camera');
              if (camera.length > 0 && (await finishedFrames(final, out, [frame])).has(frame)) {
                await r.staging?.stageFrames(out, new Set([frame]));
                tracker.apply(chunkKey, ev);
              }
            });
            continue;
          }
          tracker.apply(chunkKey, ev);
        }
        publish();
      },
    });
  } catch (err) {
    await bill(Date.now() - t0).catch(() => undefined);
    tracker.chunkEnded(chunkKey, true);
    await work;
    publish(true);
    await work;
    // A crash, hang or timeout: the report names the attempt, the frame reached and the last lines.
    if (err instanceof BlenderRunError) Object.assign(err.details, failureDetails(r.task, parser, err.details.lastLines));
    throw err;
  }
  ctx.log.info({ exitCode: result.exitCode, ms: result.durationMs, device: billedRun(0, used).device }, 'blender exited');
  ctx.taskLog?.note(`Blender exited with code ${result.exitCode} after ${(result.durationMs / 1000).toFixed(1)} s`);
  await reportSetupWarnings(env, jobId, setupWarnings);
  await work;
  if (result.exitCode === 0) await promoteFinished(attempt, out);
  await bill(result.durationMs);
  const failed = result.exitCode !== 0;
  tracker.chunkEnded(chunkKey, failed);
  publish(true);
  await work;
  if (!failed) return;
  const details = { exitCode: result.exitCode, ...failureDetails(r.task, parser, result.lastLines), errors };
  // A setup error (bad camera, scene...) or a Blender error line is the same on every try.
  if (!setupOk || errors.length > 0) {
    throw FatalTaskError.render('BLENDER_FAILED', `Blender failed${parser.currentFrame !== null ? ` at frame ${parser.currentFrame}` : ''}: ${errors[0] ?? result.lastLines.at(-1) ?? `exit code ${result.exitCode}`}`, details);
  }
  throw new RetryableTaskError(`Blender exited with code ${result.exitCode}`, details);
}

/** What every failed run reports in `failedReason.errorDetails` (README, "Rendering"). */
function failureDetails(task: Task, parser: BlenderLogParser, lastLines: unknown): { attempts: number; lastFrame: number | null; lastLines: string[] } {
  const lines = Array.isArray(lastLines) ? lastLines.map(String) : [];
  return { attempts: task.attempts, lastFrame: parser.lastFrame, lastLines: lines.slice(-20) };
}
