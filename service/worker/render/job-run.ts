// What the render tasks of one job share in a worker process while it renders that job, in both
// render modes: the prepared project, the output folders, one progress tracker (so the job's
// progress counts the frames of every slot of this process), the job's status as this process
// last set it, the billing of its Blender time, and one ordered queue of bookkeeping (file moves,
// progress and status writes) kept off Blender's output callbacks. Built by the first task of the
// job that needs it, dropped a while after the last.
import { appendFile, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import type { RequestedConfig } from '../../../shared/api/render-config.js';
import type { JobStatus } from '../../../shared/job-status.js';
import { expandFrameRanges } from '../../domain/frame-ranges.js';
import { moveJob } from '../../domain/job-lifecycle.js';
import { formatRunLine, type RenderRun } from '../../domain/normalized-seconds.js';
import type { JobRecord } from '../../ports/jobs.js';
import { finishedFrames, finishedFramesListed, outputLayout, type OutputLayout } from '../outputs/chunk-files.js';
import { EarlyOutputs } from '../outputs/early-outputs.js';
import { dropDamagedFrames } from '../outputs/frame-integrity.js';
import { FrameStaging, RENDER_SECONDS_FILE, stagingPrefix } from '../outputs/frame-staging.js';
import { frameImage, FrameThumbnails } from '../outputs/thumbnails.js';
import { jobOutputPrefix } from '../../domain/output-keys.js';
import { prepareProject, type PreparedProject } from '../project/job-files.js';
import type { WorkerEnv } from '../runtime/env.js';
import { FatalTaskError } from '../runtime/outcomes.js';
import type { RenderPlan } from './blender-setup.js';
import { ProgressTracker } from './progress-tracker.js';

/** How often progress counters are written while frames render. */
const PROGRESS_EVERY_MS = 500;
/** How often `out/` is read for frames other processes of this machine finished. */
const SCAN_EVERY_MS = 5000;
/** How long a job's shared state outlives its last task in this process (the next frame usually comes at once). */
const KEEP_MS = 30_000;

/** What a JobRun is made of; JobRuns makes them from the job's record. */
export interface JobRunParts {
  jobId: string;
  final: FinalConfig;
  plan: RenderPlan;
  requested: RequestedConfig;
  status: JobStatus;
  project: PreparedProject;
  tracker: ProgressTracker;
  /** Set when other machines may finalize: finished frames are staged in storage as they come. */
  staging?: FrameStaging;
  /** Set when this machine finalizes and renders warm: finished frames are stored as outputs as they come. */
  early?: EarlyOutputs;
  /** Set for a render (not an estimate's samples): each finished frame gets its thumbnail. */
  thumbnails?: FrameThumbnails;
}

export class JobRun {
  readonly jobId: string;
  readonly final: FinalConfig;
  readonly plan: RenderPlan;
  readonly requested: RequestedConfig;
  readonly project: PreparedProject;
  readonly tracker: ProgressTracker;
  readonly out: OutputLayout;
  readonly staging: FrameStaging | undefined;
  readonly early: EarlyOutputs | undefined;
  readonly thumbnails: FrameThumbnails | undefined;
  /** The job's status as this process last set or saw it. */
  readonly state: { status: JobStatus };
  users = 0;
  dropTimer: NodeJS.Timeout | undefined;
  private work: Promise<void> = Promise.resolve();
  private lastPublish = 0;
  private lastScan = Date.now();
  /** The write a throttled publish owes, so the last state always reaches the store. */
  private trailing: NodeJS.Timeout | undefined;
  private closed = false;
  private runLog: Promise<FileHandle> | undefined;

  constructor(
    readonly env: WorkerEnv,
    parts: JobRunParts,
  ) {
    this.jobId = parts.jobId;
    this.final = parts.final;
    this.plan = parts.plan;
    this.requested = parts.requested;
    this.project = parts.project;
    this.tracker = parts.tracker;
    this.out = outputLayout(parts.project.jobDir);
    this.staging = parts.staging;
    this.early = parts.early;
    this.thumbnails = parts.thumbnails;
    this.state = { status: parts.status };
  }

  /** Runs `fn` after the bookkeeping queued before it; a failure is logged, never thrown at Blender's output. */
  later(log: Logger, fn: () => Promise<void>): void {
    this.work = this.work.then(fn).catch((err: unknown) => log.warn({ err }, 'render bookkeeping failed'));
  }

  /** Waits for the bookkeeping queued so far, and the thumbnails it asked for. */
  async settled(): Promise<void> {
    await this.work;
    await this.thumbnails?.settled();
  }

  /** Makes the thumbnail of a frame whose files are in `out/`, beside the bookkeeping (never in its way). */
  thumbnail(frame: number, log: Logger): void {
    this.thumbnails?.add(frameImage(this.final, this.out, frame), log);
  }

  /**
   * Writes the progress counters: at once when forced or when the job's last frame is done, else at
   * most every PROGRESS_EVERY_MS, the skipped state written at the end of the interval.
   */
  publish(log: Logger, force = false): void {
    if (this.closed) return;
    const now = Date.now();
    const wait = PROGRESS_EVERY_MS - (now - this.lastPublish);
    if (!force && !this.tracker.complete && wait > 0) {
      this.trailing ??= setTimeout(() => {
        this.trailing = undefined;
        this.write(log, true);
      }, wait);
      return;
    }
    this.write(log, false);
  }

  private write(log: Logger, late: boolean): void {
    clearTimeout(this.trailing);
    this.trailing = undefined;
    this.lastPublish = Date.now();
    this.later(log, async () => {
      // A late write must not replace the counters of a job that finished meanwhile (finalize wrote them).
      if (late && !['booting', 'rendering'].includes((await this.env.jobs.getById(this.jobId))?.job.status ?? ''))
        return;
      if (Date.now() - this.lastScan >= SCAN_EVERY_MS) await this.scanOut();
      await this.env.jobs.setProgress(this.tracker.snapshot(this.state.status));
    });
  }

  /** No more writes (the job ended here, or its last task here is long gone). */
  close(): void {
    this.closed = true;
    clearTimeout(this.trailing);
    void this.runLog?.then((fh) => fh.close()).catch(() => undefined);
    this.runLog = undefined;
    this.early?.close();
  }

  /** Counts the frames that other processes sharing this machine's `out/` finished. */
  private async scanOut(): Promise<void> {
    this.lastScan = Date.now();
    const missing = [...expandFrameRanges(this.final.frameRanges ?? [])].filter((f) => !this.tracker.doneFrames.has(f));
    if (missing.length) this.tracker.addDone(await finishedFramesListed(this.final, this.out, missing));
  }

  /** The first frame started: the job is `rendering` (once per process; the move is idempotent across processes). */
  markRendering(log: Logger): void {
    if (this.state.status !== 'booting') return;
    this.state.status = 'rendering';
    this.later(log, async () => void (await moveJob(this.env.jobs, this.jobId, 'markRendering')));
  }

  /**
   * Records one billed piece of Blender time (normalizedSeconds sums them): `label` must be unique
   * per piece. Appended through one open file per job (a piece per frame), written at once.
   */
  async bill(label: string, run: RenderRun): Promise<void> {
    if (this.staging) return this.staging.addRun(label, run);
    const line = `${formatRunLine(run)}\n`;
    // A closed run (a warm process billing its load after the job's state was dropped) writes once.
    if (this.closed) return appendFile(path.join(this.project.jobDir, RENDER_SECONDS_FILE), line);
    this.runLog ??= open(path.join(this.project.jobDir, RENDER_SECONDS_FILE), 'a');
    await (await this.runLog).write(line);
  }

  /** Of `frames`, those not rendered yet (neither counted here nor found in `out/`). */
  async framesToDo(frames: readonly number[]): Promise<number[]> {
    const unknown = frames.filter((f) => !this.tracker.doneFrames.has(f));
    const onDisk = unknown.length ? await finishedFrames(this.final, this.out, unknown) : new Set<number>();
    return unknown.filter((f) => !onDisk.has(f));
  }
}

/** The JobRuns of a worker process, by job. */
export class JobRuns {
  private readonly byJob = new Map<string, { promise: Promise<JobRun>; run?: JobRun }>();

  /** `earlyOutputs`: finished frames are stored as outputs as they come (warm mode, without staging). */
  constructor(
    private readonly env: WorkerEnv,
    private readonly opts: { earlyOutputs: boolean },
  ) {}

  /** The job's shared state, prepared on first use; `release` it when the task ends. */
  async acquire(rec: JobRecord, signal: AbortSignal): Promise<JobRun> {
    let entry = this.byJob.get(rec.job.id);
    if (!entry) {
      const made: { promise: Promise<JobRun>; run?: JobRun } = { promise: this.create(rec, signal) };
      made.promise.then(
        (run) => (made.run = run),
        () => this.byJob.get(rec.job.id) === made && this.byJob.delete(rec.job.id),
      );
      this.byJob.set(rec.job.id, made);
      entry = made;
    }
    const run = await entry.promise;
    run.users++;
    clearTimeout(run.dropTimer);
    return run;
  }

  release(run: JobRun): void {
    if (--run.users > 0) return;
    run.dropTimer = setTimeout(() => {
      if (run.users > 0 || this.byJob.get(run.jobId)?.run !== run) return;
      this.byJob.delete(run.jobId);
      run.close();
    }, KEEP_MS);
    run.dropTimer.unref?.();
  }

  /** Forgets a job (it ended): the next task, if any, starts from what is on disk. */
  drop(jobId: string): void {
    const entry = this.byJob.get(jobId);
    this.byJob.delete(jobId);
    entry?.run?.close();
  }

  private async create(rec: JobRecord, signal: AbortSignal): Promise<JobRun> {
    const final = rec.job.finalConfig;
    const plan = rec.internal.render;
    if (!final || !plan) throw FatalTaskError.render('NOT_PLANNED', 'The render has no plan; start it again.');
    const project = await prepareProject(rec, {
      storage: this.env.storage,
      workRoot: this.env.settings.workRoot,
      signal,
      blobCache: this.env.blobCache,
      ...(this.env.settings.unpackLimits ? { limits: this.env.settings.unpackLimits } : {}),
    });
    const allFrames = expandFrameRanges(final.frameRanges ?? []);
    const layout = outputLayout(project.jobDir);
    // Frames found from before this worker started (a restart) count only if a power loss left their files whole.
    const { done } = await dropDamagedFrames(
      final,
      layout,
      await finishedFramesListed(final, layout, allFrames),
      this.env.startedAt,
    );
    // Frames copied from a requeued job count as done, also where they were staged for another machine.
    const copied = expandFrameRanges(plan.copiedFrames ?? []);
    const tracker = new ProgressTracker({
      jobId: rec.job.id,
      frames: allFrames,
      slots: plan.slots,
      doneFrames: [...done, ...copied],
    });
    const staging = this.env.settings.stageFrames
      ? new FrameStaging(this.env.storage, stagingPrefix(rec.job.id))
      : undefined;
    const prefix = jobOutputPrefix(rec.job.workspaceId, rec.job.id);
    const early =
      !staging && this.opts.earlyOutputs ? new EarlyOutputs(this.env.storage, prefix, project.jobDir) : undefined;
    const ffmpeg = this.env.settings.ffmpeg ? { ffmpeg: { ffmpegPath: this.env.settings.ffmpeg } } : {};
    const thumbnails = new FrameThumbnails({ storage: this.env.storage, prefix, workDir: project.jobDir, ...ffmpeg });
    const parts = {
      jobId: rec.job.id,
      final,
      plan,
      requested: rec.job.requestedConfig ?? {},
      status: rec.job.status,
      project,
      tracker,
      thumbnails,
    };
    return new JobRun(this.env, { ...parts, ...(staging ? { staging } : {}), ...(early ? { early } : {}) });
  }
}

/** What render_setup.py could not apply (an add-on, ACES) is told to the client in finalConfig. */
export async function reportSetupWarnings(env: WorkerEnv, jobId: string, messages: readonly string[]): Promise<void> {
  if (messages.length === 0) return;
  const rec = await env.jobs.getById(jobId);
  const final = rec?.job.finalConfig;
  if (!final) return;
  const known = new Set((final.analysisWarnings ?? []).map((w) => w.message));
  const fresh = [...new Set(messages)].filter((m) => !known.has(m));
  if (fresh.length === 0) return;
  await env.jobs.update(jobId, {
    finalConfig: {
      ...final,
      analysisWarnings: [
        ...(final.analysisWarnings ?? []),
        ...fresh.map((message) => ({ code: 'RENDER_SETUP_WARNING', message, blocking: false })),
      ],
      notes: [final.notes, ...fresh].filter(Boolean).join('\n'),
    },
  });
}
