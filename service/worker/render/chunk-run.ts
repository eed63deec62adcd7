// One Blender process rendering a run of frames (`-s/-e/-a`): chunked mode's render task, and the
// estimate's sample frames (estimate-sample.ts). Progress is parsed from Blender's output as it
// comes; a frame's files move into the job's `out/` folder as soon as Blender finishes the frame,
// through the job's ordered bookkeeping (JobRun). A crash or a hang is retryable; a setup error or
// a Blender error line is the same on every try.
import type { Task } from '../../ports/tasks.js';
import type { FrameChunk } from '../../domain/frame-ranges.js';
import { billedRun } from '../../domain/normalized-seconds.js';
import { BlenderRunError } from '../../../blender/errors.js';
import { runBlender, type BlenderRunResult } from '../../../blender/run.js';
import { parseDeviceLine, type DeviceReport } from '../../../blender/render/device-report.js';
import { BlenderLogParser, type ProgressEvent } from '../../../blender/render/progress-parser.js';
import { renderInvocation } from '../../../blender/render/render-invocation.js';
import { parseSetupLine } from '../../../blender/render/render-settings.js';
import {
  attemptLayout,
  filesOfFrame,
  finishedFrames,
  promoteFinished,
  type OutputLayout,
} from '../outputs/chunk-files.js';
import { FatalTaskError, RetryableTaskError } from '../runtime/outcomes.js';
import type { TaskContext } from '../runtime/runtime.js';
import { blenderSetup, planBinary } from './blender-setup.js';
import { recordFrame } from './frame-recorder.js';
import { reportSetupWarnings, type JobRun } from './job-run.js';

/** What one run's output said so far, and the bookkeeping its lines start. */
class ChunkOutput {
  readonly parser = new BlenderLogParser();
  readonly key: string;
  /** When Blender printed the frame in flight's first line (its render time runs from there). */
  private frameBegunAt = Date.now();
  setupOk = false;
  /** What render_setup.py says the run really renders on (CPU when it fell back): that is billed. */
  used: DeviceReport | undefined;
  readonly warnings: string[] = [];
  readonly errors: string[] = [];

  constructor(
    private readonly job: JobRun,
    private readonly task: Task,
    private readonly ctx: TaskContext,
    private readonly attempt: OutputLayout,
    part: FrameChunk,
  ) {
    this.key = `${task.id}:${part.start}`;
  }

  line(stream: 'stdout' | 'stderr', line: string): void {
    this.ctx.taskLog?.line(stream, line);
    this.used = parseDeviceLine(line) ?? this.used;
    this.setupLine(line);
    for (const ev of this.parser.line(line)) {
      if (ev.type === 'frameStarted') {
        this.job.markRendering(this.ctx.log);
        this.frameBegunAt = Date.now();
      }
      if (ev.type === 'error') this.errors.push(ev.message);
      if (ev.type === 'frameFinished') this.frameFinished(ev);
      else this.job.tracker.apply(this.key, ev);
    }
    this.job.publish(this.ctx.log);
  }

  private setupLine(line: string): void {
    const setup = parseSetupLine(line);
    if (setup?.type === 'ok') {
      this.setupOk = true;
      this.ctx.log.info({ setup: setup.summary }, 'render settings applied');
    } else if (setup) {
      this.ctx.log.warn({ setup: setup.message }, `render setup ${setup.type}`);
      if (setup.type === 'warning') this.warnings.push(setup.message);
      // Printed before Python's own "Error: Python: Traceback...": the first error says what to fix.
      if (setup.type === 'error') this.errors.push(setup.message);
    }
  }

  /** The frame counts as done only once all its files are safely in out/. */
  private frameFinished(ev: Extract<ProgressEvent, { type: 'frameFinished' }>): void {
    const { job, ctx, task } = this;
    const frame = ev.frame;
    // Measured here, as Blender prints it: Blender's own figure can read 0 after the first frame.
    const wall = (Date.now() - this.frameBegunAt) / 1000;
    const stat = {
      jobId: job.jobId,
      frame,
      attempt: task.attempts,
      seconds: wall > 0 ? wall : ev.seconds,
      memory: this.parser.lastFrameMemory,
      device: this.used,
      lane: ctx.lane.name,
    };
    job.later(ctx.log, async () => {
      await promoteFinished(this.attempt, job.out, frame);
      const camera = filesOfFrame(job.final, frame).filter((f) => f.kind === 'camera');
      if (camera.length > 0 && (await finishedFrames(job.final, job.out, [frame])).has(frame)) {
        await job.staging?.stageFrames(job.out, new Set([frame]));
        job.tracker.apply(this.key, ev);
        await recordFrame(job.env, { ...stat, plannedVersion: job.plan.blenderVersion }, ctx.log);
        job.thumbnail(frame, ctx.log);
      }
    });
  }

  /** What every failed run reports in `failedReason.errorDetails` (docs/reference/api-decisions.md, "Rendering"). */
  failureDetails(lastLines: unknown): { attempts: number; lastFrame: number | null; lastLines: string[] } {
    const lines = Array.isArray(lastLines) ? lastLines.map(String) : [];
    return { attempts: this.task.attempts, lastFrame: this.parser.lastFrame, lastLines: lines.slice(-20) };
  }
}

/** Renders `part` of the job's frames in one Blender process. */
export async function renderPart(job: JobRun, task: Task, ctx: TaskContext, part: FrameChunk): Promise<void> {
  const { env } = job;
  const label = `${task.id.split(':').pop()}-${task.attempts}-${part.start}`;
  const attempt = await attemptLayout(job.project.jobDir, label);
  const setup = await blenderSetup({
    env,
    project: job.project,
    final: job.final,
    requested: job.requested,
    plan: job.plan,
    binary: planBinary(env, job.plan),
    slot: ctx.lane.slot,
    attempt,
  });
  const output = new ChunkOutput(job, task, ctx, attempt, part);
  // Billed time (normalizedSeconds) counts every Blender run: crashed, hung and retried ones too,
  // each with the device it really used.
  const bill = (ms: number) => job.bill(label, billedRun(ms / 1000, output.used));
  let result: BlenderRunResult;
  const t0 = Date.now();
  try {
    result = await runBlender({
      ...renderInvocation({ ...setup, chunk: part }),
      cwd: attempt.outDir,
      timeoutMs: env.settings.chunkTimeoutMs,
      idleTimeoutMs: env.settings.chunkIdleTimeoutMs,
      signal: ctx.signal,
      onSpawn: (pid) => {
        ctx.log.info({ pid, frames: `${part.start}-${part.end}x${part.step}` }, 'blender started');
        ctx.taskLog?.note(
          `Blender started (pid ${pid}) for ` +
            `frames ${part.start}-${part.end}${part.step > 1 ? ` step ${part.step}` : ''}`,
        );
      },
      onLine: (stream, line) => output.line(stream, line),
    });
  } catch (err) {
    await bill(Date.now() - t0).catch(() => undefined);
    job.tracker.chunkEnded(output.key, true);
    await job.settled();
    job.publish(ctx.log, true);
    await job.settled();
    // A crash, hang or timeout: the report names the attempt, the frame reached and the last lines.
    if (err instanceof BlenderRunError) Object.assign(err.details, output.failureDetails(err.details.lastLines));
    throw err;
  }
  await partEnded(job, ctx, output, attempt, result, bill);
}

/** Blender exited: its files, its bill and its progress, then the exit as the task's outcome. */
async function partEnded(
  job: JobRun,
  ctx: TaskContext,
  output: ChunkOutput,
  attempt: OutputLayout,
  result: BlenderRunResult,
  bill: (ms: number) => Promise<void>,
): Promise<void> {
  ctx.log.info(
    { exitCode: result.exitCode, ms: result.durationMs, device: billedRun(0, output.used).device },
    'blender exited',
  );
  ctx.taskLog?.note(`Blender exited with code ${result.exitCode} after ${(result.durationMs / 1000).toFixed(1)} s`);
  await reportSetupWarnings(job.env, job.jobId, output.warnings);
  await job.settled();
  if (result.exitCode === 0) await promoteFinished(attempt, job.out);
  await bill(result.durationMs);
  const failed = result.exitCode !== 0;
  job.tracker.chunkEnded(output.key, failed);
  job.publish(ctx.log, true);
  await job.settled();
  if (!failed) return;
  const { parser, errors } = output;
  const details = { exitCode: result.exitCode, ...output.failureDetails(result.lastLines), errors };
  // A setup error (bad camera, scene...) or a Blender error line is the same on every try.
  if (!output.setupOk || errors.length > 0) {
    const at = parser.currentFrame !== null ? ` at frame ${parser.currentFrame}` : '';
    throw FatalTaskError.render(
      'BLENDER_FAILED',
      `Blender failed${at}: ${errors[0] ?? result.lastLines.at(-1) ?? `exit code ${result.exitCode}`}`,
      details,
    );
  }
  throw new RetryableTaskError(`Blender exited with code ${result.exitCode}`, details);
}
