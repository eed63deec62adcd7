// One render slot's warm Blender for one job, with what the worker keeps beside it: the attempt
// folder Blender saves into, the device it really renders on (billed), the setup's warnings, and
// the billing of its load. The slot's WarmPool keeps it between the job's frames; `render()`
// renders a run of them, and warm-frame.ts moves each frame it saves into the out/ of the run that
// asked for it, which need not be the one it started for (an estimate's Blender is taken over by
// its job's render: estimate-render.ts). Setup and frame failures come out as task outcomes
// (warm-failures.ts).
import type { Logger } from 'pino';
import { BlenderCanceledError, BlenderRunError, FrameNotStartedError } from '../../../blender/errors.js';
import { parseDeviceLine, type DeviceReport } from '../../../blender/render/device-report.js';
import { BlenderLogParser } from '../../../blender/render/progress-parser.js';
import { warmInvocation } from '../../../blender/render/render-invocation.js';
import { parseSetupLine } from '../../../blender/render/render-settings.js';
import { WarmBlender, type FrameRun } from '../../../blender/render/warm-process.js';
import { billedRun, type RenderRun } from '../../domain/normalized-seconds.js';
import type { Task } from '../../ports/tasks.js';
import { attemptLayout, type OutputLayout } from '../outputs/chunk-files.js';
import type { PreparedProject } from '../project/job-files.js';
import type { Slot } from '../runtime/devices.js';
import type { WorkerEnv } from '../runtime/env.js';
import { FatalTaskError, RetryableTaskError } from '../runtime/outcomes.js';
import type { TaskContext } from '../runtime/runtime.js';
import { blenderSetup } from './blender-setup.js';
import { WarmLogs } from './warm-logs.js';
import { reportSetupWarnings, type JobRun } from './job-run.js';
import { frameFailure, setupFailure } from './warm-failures.js';
import { keepWarmFrame, type InFlight } from './warm-frame.js';

let started = 0;

export interface WarmRenderOptions {
  env: WorkerEnv;
  run: JobRun;
  /** The slot's lane name and device. */
  lane: string;
  slot: Slot | undefined;
  /** This machine's build of the planned version. */
  binary: string;
  /**
   * The project it loads, whose job folder holds its attempt folder and is all it may write (the
   * sandbox). Default `run.project`. An estimate's Blender, kept for the render, takes the job's
   * own (the render's) rather than the estimate's folder.
   */
  project?: PreparedProject;
  /**
   * Called once, before the first frames of a run other than `run` (the render taking over an
   * estimate's Blender), with the load as billed: that run takes the load and warm-up over (estimate-handover.ts).
   */
  handOver?: (job: JobRun, load: { label: string; run: RenderRun }, log: Logger) => Promise<void>;
  log: Logger;
}

export class WarmRender {
  /** Resolves once the scene is loaded and set up; rejects with the task outcome of a failed setup. */
  readonly setup: Promise<void>;
  /** False while the scene loads (the heartbeat shows the slot loading). */
  private loaded = false;
  readonly ended: Promise<unknown>;
  private blender: WarmBlender | undefined;
  private killed = false;
  /** What render_setup.py could not apply, and the errors that stopped it. */
  private readonly warnings: string[] = [];
  private readonly setupErrors: string[] = [];
  /** A failed setup is the failure of the first frame that waited on it; the others go to a new process. */
  private setupFailureTaken = false;
  /** The load's milliseconds, once ready; whether another run took it over (handOver). */
  private loadMs = 0;
  private handedOver = false;
  private attempt: OutputLayout | undefined;
  /** What render_setup.py reports it renders on (CPU when it fell back): that is billed. */
  private device: DeviceReport | undefined;
  private readonly label: string;
  /** Folders of out/ this process has made (promoteSaved). */
  private readonly madeDirs = new Set<string>();
  private readonly logs: WarmLogs;

  private constructor(private readonly o: WarmRenderOptions) {
    this.label = `warm-${o.lane}-${process.pid}-${++started}`;
    this.logs = new WarmLogs(this.label);
    const booted = this.boot();
    // A process that never started (no attempt folder, a refused argument) is no process to keep.
    booted.catch(() => (this.killed = true));
    this.setup = booted.then((b) => this.awaitReady(b));
    // Whoever waits on setup gets its failure; the pool only needs to know when it is over.
    this.setup.catch(() => undefined).finally(() => (this.loaded = true));
    this.ended = booted.then(
      (b) => b.ended,
      () => undefined,
    );
  }

  /** Starts loading at once; the pool calls this when the slot has no process for the job. */
  static start(o: WarmRenderOptions): WarmRender {
    return new WarmRender(o);
  }

  get alive(): boolean {
    return !this.killed && (this.blender?.alive ?? true);
  }

  get loading(): boolean {
    return !this.loaded && this.alive;
  }

  kill(): void {
    this.killed = true;
    this.blender?.kill();
  }

  /**
   * Renders a run of frames of `task` in one render call, moving each frame's files into `out/` as
   * Blender saves them, and counts them in `job` (the job's shared state now: the process may
   * outlive the one it started with). `last`: the task hands nothing more to Blender after this
   * run, so the lane may claim its next task (ctx.handedOff) once it is queued. The task log notes
   * each call: each pays a setup in its first frame (EEVEE 0.85 s), so how many a task made matters.
   */
  async render(job: JobRun, frames: FrameRun, task: Task, ctx: TaskContext, last: boolean): Promise<void> {
    const { env } = this.o;
    this.logs.attach(task, ctx.taskLog);
    const blender = await this.setupDone(task);
    if (this.o.handOver && job !== this.o.run && !this.handedOver) {
      this.handedOver = true;
      await this.o.handOver(job, { label: this.label, run: billedRun(this.loadMs / 1000, this.device) }, ctx.log);
    }
    const errors: string[] = [];
    const unwritten: number[] = [];
    let current: InFlight | undefined;
    ctx.taskLog?.note(`render call ${frames.start}-${frames.end} step ${frames.step} in warm Blender ${this.label}`);
    const rendered = blender.render({
      run: frames,
      limits: { totalMs: env.settings.chunkTimeoutMs, idleMs: env.settings.chunkIdleTimeoutMs },
      signal: ctx.signal,
      onBegin: (frame) => {
        current = { frame, key: `${task.id}:${frame}`, parser: new BlenderLogParser(), saved: [], begunAt: Date.now() };
        // Per frame: debug, like every per-frame line (the task log keeps them all). At info a
        // terminal's pretty log cost a 120-frame job about 4% of its time (bench:render).
        ctx.log.debug({ warm: this.label, frame }, 'frame begun');
        if (ctx.taskLog) this.logs.sink = ctx.taskLog;
        ctx.taskLog?.note(`frame ${frame} begun in warm Blender ${this.label}`);
      },
      onLine: (_frame, line) => {
        ctx.taskLog?.line('stdout', line);
        const c = current;
        if (!c) return;
        const events = c.parser.line(line);
        // Most of Blender's lines (Updating..., Synchronizing...) say nothing the progress counts.
        if (events.length === 0) return;
        for (const ev of events) {
          if (ev.type === 'frameStarted') job.markRendering(ctx.log);
          if (ev.type === 'error') errors.push(ev.message);
          if (ev.type === 'saved') c.saved.push(ev.path);
          // A frame counts as done once its files are in out/ (below), not at Blender's Time: line.
          if (ev.type !== 'frameFinished') job.tracker.apply(c.key, ev);
        }
        job.publish(ctx.log);
      },
      onDone: (_frame, ms) => {
        if (current) this.finished(job, task, ctx, current, ms, unwritten);
        current = undefined;
      },
    });
    if (last) ctx.handedOff();
    try {
      await rendered;
    } catch (err) {
      if (!current && (err instanceof FrameNotStartedError || err instanceof BlenderCanceledError)) {
        await job.settled();
        throw err;
      }
      const failed = current;
      if (failed) {
        job.tracker.chunkEnded(failed.key, true);
        await this.bill(
          job,
          `f${failed.frame}-a${task.attempts}`,
          Date.now() - failed.begunAt,
          ctx.log,
          failed.frame,
        ).catch(() => undefined);
      }
      job.publish(ctx.log, true);
      await job.settled();
      throw frameFailure(err, task, failed?.frame ?? frames.start, errors, this.blender?.lastLines ?? []);
    }
    await job.settled();
    if (unwritten.length === 0) return;
    const details = {
      attempts: task.attempts,
      lastFrame: unwritten[0],
      lastLines: blender.lastLines.slice(-20),
      errors,
    };
    if (errors.length > 0)
      throw FatalTaskError.render('BLENDER_FAILED', `Blender failed at frame ${unwritten[0]}: ${errors[0]}`, details);
    throw new RetryableTaskError(`Blender finished frame ${unwritten[0]} without writing it`, details);
  }

  /** Blender saved a frame: its files are kept in order, off Blender's output (warm-frame.ts). */
  private finished(job: JobRun, task: Task, ctx: TaskContext, c: InFlight, ms: number, unwritten: number[]): void {
    job.later(ctx.log, async () => {
      const kept = await keepWarmFrame({
        // The calling run's: the process may have started for another (an estimate's Blender kept for the render).
        env: job.env,
        job,
        task,
        log: ctx.log,
        frame: c,
        ms,
        attempt: this.attempt!,
        madeDirs: this.madeDirs,
        device: this.device,
        lane: this.o.lane,
        bill: (piece, ms, frame) => this.bill(job, piece, ms, ctx.log, frame),
      });
      if (!kept) unwritten.push(c.frame);
    });
  }

  /** Waits for the setup; a process that died meanwhile hands the frame back for a new one. */
  private async setupDone(task: Task): Promise<WarmBlender> {
    try {
      await this.setup;
    } catch (err) {
      if (this.setupFailureTaken && !(err instanceof FatalTaskError))
        throw new FrameNotStartedError('the warm Blender failed to load for another frame', {});
      this.setupFailureTaken = true;
      if (err instanceof FatalTaskError) err.failedReason.errorDetails.attempts = task.attempts;
      if (err instanceof BlenderRunError) err.details.attempts = task.attempts;
      throw err;
    }
    if (!this.blender || !this.alive) throw new FrameNotStartedError('the warm Blender ended before the frame', {});
    return this.blender;
  }

  /** Lays out the attempt folder, writes the settings and starts Blender on the scene. */
  private async boot(): Promise<WarmBlender> {
    const { env, run, slot, log } = this.o;
    const project = this.o.project ?? run.project;
    const attempt = await attemptLayout(project.jobDir, this.label);
    this.attempt = attempt;
    const setup = await blenderSetup({
      env,
      project,
      final: run.final,
      requested: run.requested,
      plan: run.plan,
      binary: this.o.binary,
      slot,
      attempt,
    });
    if (this.killed) throw new BlenderCanceledError('the warm Blender was ended before it started');
    const blender = WarmBlender.start({
      invocation: warmInvocation(setup),
      cwd: attempt.outDir,
      loadLimits: { totalMs: env.settings.chunkTimeoutMs, idleMs: env.settings.chunkIdleTimeoutMs },
      onSpawn: (pid) => {
        log.info({ pid, warm: this.label }, 'warm Blender started');
        this.logs.sideLine(`[renderbridge] warm Blender ${this.label} started (pid ${pid})`);
      },
      onLine: (line) => {
        this.logs.sideLine(line);
        this.device = parseDeviceLine(line) ?? this.device;
        const setup = parseSetupLine(line);
        if (setup?.type === 'ok') log.info({ setup: setup.summary }, 'render settings applied');
        else if (setup) log.warn({ setup: setup.message }, `render setup ${setup.type}`);
        if (setup?.type === 'warning') this.warnings.push(setup.message);
        if (setup?.type === 'error') this.setupErrors.push(setup.message);
      },
    });
    this.blender = blender;
    return blender;
  }

  /** The load is billed once, to the job, at the device it set up; a failed setup says why. */
  private async awaitReady(blender: WarmBlender): Promise<void> {
    const { env, run, log } = this.o;
    const t0 = Date.now();
    try {
      const ms = (this.loadMs = await blender.ready);
      log.info({ warm: this.label, ms, device: billedRun(0, this.device).device }, 'warm Blender ready');
      await this.bill(run, 'load', ms, log);
      await reportSetupWarnings(env, run.jobId, this.warnings);
    } catch (err) {
      await this.bill(run, 'load', Date.now() - t0, log).catch(() => undefined);
      throw setupFailure(err, blender.lastLines, this.setupErrors);
    }
  }

  /** Bills `ms` of this process (its load, or one frame's render) at the device it really uses. */
  private async bill(job: JobRun, piece: string, ms: number, log: Logger, frame?: number): Promise<void> {
    const run = billedRun(ms / 1000, this.device);
    // A frame's piece at debug (one a frame); the load's at info (one a Blender).
    log[frame !== undefined ? 'debug' : 'info'](
      { warm: this.label, piece, ms, device: run.device, ...(frame !== undefined ? { frame } : {}) },
      'render time billed',
    );
    await job.bill(`${this.label}-${piece}`, run);
  }
}
