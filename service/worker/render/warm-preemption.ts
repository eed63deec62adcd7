// Preemption at frame boundaries in warm mode (extension scheduling; off unless the operator sets
// preemptPriorityGap). A warm slot then hands its Blender one frame at a time and, before each,
// asks the queue whether a task waiting for a slot has a priority at least `gap` above the running
// job's. If one has, the frames done stay (kept, counted and billed as each finished, fsync'd
// here as at a task's end) and the task is handed back untouched (DeferTaskError, no delay): no
// attempt is spent, and its next run renders only the frames it still lacks. The lane then claims
// the outranking task, first in the claim order. A slot hands back only on a place it took for
// the waiting job (WaitingPriority.takeHandBackPlace): a job has as many places as waiting tasks,
// shared by every worker, so a two-frame job frees two slots of the farm, not one per worker. The
// job's notice (preemption-notice.ts) says why its frames wait, and makes the task's next run, on
// any machine, look for the frames done (as a retry does) instead of rendering them again.
// Chunked mode never preempts: a chunk is one Blender call for all its frames, so stopping it at a
// frame would mean killing Blender mid-frame and losing the frame it was on.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { FrameRun } from '../../../blender/render/warm-process.js';
import { DEFAULT_PRIORITY } from '../../../shared/api/scheduling.js';
import type { Job } from '../../../shared/api/job.js';
import type { WorkerJobStore } from '../../ports/jobs.js';
import type { TaskKind } from '../../ports/tasks.js';
import {
  HAND_BACK_PLACE_MS,
  hasWaitingPriority,
  type WaitingPriority,
  type WaitingTop,
} from '../../ports/waiting-priority.js';
import { syncFrames } from '../outputs/durable-frames.js';
import type { OutputLayout } from '../outputs/chunk-files.js';
import type { WorkerEnv } from '../runtime/env.js';
import { DeferTaskError } from '../runtime/outcomes.js';
import type { TaskContext } from '../runtime/runtime.js';
import { noteHandBack } from './preemption-notice.js';

/** How long one read of the queue answers every slot of this process: a few reads a second at most. */
const READ_EVERY_MS = 250;
/** Jobs whose tag fit is remembered (a job's required tags are set at render and never change). */
const MAX_FITS = 1000;
/** What a warm slot claims: the read and the places are about these tasks. */
const KINDS: readonly TaskKind[] = ['render-chunk'];

/** Whether a task waiting at `waiting`'s priority outranks a job of priority `running` by `gap` (0: never). */
export function outranks(gap: number, running: number, waiting: WaitingTop | undefined): waiting is WaitingTop {
  return gap > 0 && waiting !== undefined && waiting.priority >= running + gap;
}

/** Whether a worker with `tags` may render a job that requires `required` (scheduling.requiredTags). */
export function tagsFit(required: readonly string[] | undefined, tags: ReadonlySet<string>): boolean {
  return (required ?? []).every((t) => tags.has(t));
}

export interface PreemptionOptions {
  /** The priority gap (preemptPriorityGap, above 0). */
  gap: number;
  queue: WaitingPriority;
  /** Read for a waiting job's tags; written with the notice of a hand-back (Job.preemption). */
  jobs: Pick<WorkerJobStore, 'getById' | 'update'>;
  /** This worker's tags (--tag): a waiting job that requires others cannot take this slot. Default none. */
  tags?: readonly string[];
  /** How long one read answers every slot. Default READ_EVERY_MS (250 ms). */
  readEveryMs?: number;
  /** How long a hand-back place stays taken. Default HAND_BACK_PLACE_MS (15 s). */
  placeMs?: number;
  /** Names this process's slots as holders of places (`<holder>/<lane>`). Default a random id. */
  holder?: string;
  now?: () => number;
  /**
   * Told when the queue's reads start failing and when they come back (a revoked token, a rate
   * limit, a 5xx): a failed read preempts nothing, so without it preemption would stop unseen.
   * Default none.
   */
  log?: Pick<Logger, 'warn' | 'info'>;
}

/** The process's one watch on the queue, shared by its slots. */
export class PreemptionWatch {
  /** The latest read; `full` once a slot of this process found every place of its job taken. */
  private last: { at: number; top: Promise<WaitingTop | undefined>; full: boolean } | undefined;
  private readonly fits = new Map<string, boolean>();
  private readonly tags: ReadonlySet<string>;
  private readonly holder: string;
  /** Whether the last read or place failed: one warning per failing streak, not one per 250 ms. */
  private failing = false;

  constructor(private readonly o: PreemptionOptions) {
    this.tags = new Set(o.tags ?? []);
    this.holder = o.holder ?? randomUUID();
  }

  /** The waiting task that should take the slot from `job`'s frames now, or undefined. Never throws. */
  async outranking(job: Pick<Job, 'id' | 'scheduling'>): Promise<WaitingTop | undefined> {
    const top = await this.read().top;
    const running = job.scheduling?.priority ?? DEFAULT_PRIORITY;
    if (!outranks(this.o.gap, running, top) || top.jobId === job.id) return undefined;
    return (await this.fit(top)) ? top : undefined;
  }

  /**
   * Before frame `todo[index]` of task `taskId`: when a waiting task outranks the job and a place
   * for its job is free, makes the frames done durable, notes the hand-back on the job and throws
   * it, saying what paused the job (the task log keeps it). Once a slot of the process found the
   * places taken, the others wait for the next read.
   */
  async beforeFrame(
    ctx: TaskContext,
    out: OutputLayout,
    todo: readonly number[],
    index: number,
    taskId?: string,
  ): Promise<void> {
    const read = this.read();
    const by = await this.outranking(ctx.job.job);
    if (!by || read.full) return;
    const holder = `${this.holder}/${ctx.lane.name}`;
    const placeMs = this.o.placeMs ?? HAND_BACK_PLACE_MS;
    const took = this.o.queue.takeHandBackPlace(by.jobId, KINDS, holder, placeMs);
    if (!(await this.watched(took, false, 'taking a hand-back place'))) {
      read.full = true;
      return;
    }
    const done = todo.slice(0, index);
    // As at a task's end (render-frames.ts): on the disk before the queue hears of it.
    await syncFrames(out, done);
    const afterFrame = done.length > 0 ? done[done.length - 1]! : null;
    const at = afterFrame !== null ? `after frame ${afterFrame}` : `before frame ${todo[index]}`;
    const reason = `paused for a priority-${by.priority} job ${at}`;
    if (taskId) {
      const h = { taskId, priority: by.priority, afterFrame, reason };
      // Best effort: without it the next run renders the frames done again, which is only slower.
      await noteHandBack(this.o.jobs, ctx.job.job.id, h).catch((err: unknown) =>
        ctx.log.warn({ err }, 'the preemption notice of the job was not written'),
      );
    }
    ctx.taskLog?.note(`${reason}: ${todo.length - index} frame(s) handed back to the queue (job ${by.jobId})`);
    ctx.log.info(
      { by: by.jobId, priority: by.priority, framesDone: done.length, framesLeft: todo.length - index },
      'task handed back for a higher-priority job',
    );
    throw new DeferTaskError(0, reason);
  }

  /** One read of the queue per READ_EVERY_MS for the whole process; a failed read preempts nothing. */
  private read(): { top: Promise<WaitingTop | undefined>; full: boolean } {
    const now = (this.o.now ?? Date.now)();
    if (!this.last || now - this.last.at >= (this.o.readEveryMs ?? READ_EVERY_MS)) {
      const top = this.watched(this.o.queue.topWaiting(KINDS), undefined, 'reading the waiting priority');
      this.last = { at: now, top, full: false };
    }
    return this.last;
  }

  /** `p`, or `fallback` when it fails; the first failure of a streak and the recovery are logged. */
  private async watched<T>(p: Promise<T>, fallback: T, what: string): Promise<T> {
    try {
      const value = await p;
      if (this.failing) this.o.log?.info('preemption works again: the queue answers');
      this.failing = false;
      return value;
    } catch (err) {
      if (!this.failing) {
        this.o.log?.warn({ err }, `preemption paused: ${what} failed; frames go on until the queue answers`);
      }
      this.failing = true;
      return fallback;
    }
  }

  /**
   * Whether this worker may render the waiting job (its required tags, from the read where it
   * carries them, else from the job); unknown jobs do not preempt.
   */
  private async fit(top: WaitingTop): Promise<boolean> {
    if (top.requiredTags) return tagsFit(top.requiredTags, this.tags);
    const jobId = top.jobId;
    const known = this.fits.get(jobId);
    if (known !== undefined) return known;
    const rec = await this.o.jobs.getById(jobId).catch(() => undefined);
    if (!rec) return false;
    const fits = tagsFit(rec.job.scheduling?.requiredTags, this.tags);
    if (this.fits.size >= MAX_FITS) this.fits.clear();
    this.fits.set(jobId, fits);
    return fits;
  }
}

/** The frames of a task as render calls: one frame each, so that every frame ends at a boundary. */
export function singleFrames(todo: readonly number[]): FrameRun[] {
  return todo.map((f) => ({ start: f, end: f, step: 1 }));
}

/**
 * The watch of a warm worker whose operator turned preemption on, else undefined. Every queue of
 * the service tells its waiting priority (a remote worker's through the worker API); one that
 * cannot leaves it off, said once.
 */
export function preemptionWatch(
  env: Pick<WorkerEnv, 'settings' | 'queue' | 'jobs'>,
  tags: readonly string[],
  log: Logger,
): PreemptionWatch | undefined {
  const gap = env.settings.preemptPriorityGap ?? 0;
  if (gap <= 0 || env.settings.renderMode !== 'warm') return undefined;
  if (!hasWaitingPriority(env.queue)) {
    log.warn({ gap }, 'preemption stays off on this worker: its queue cannot tell the priority waiting');
    return undefined;
  }
  log.info({ gap }, 'preemption on: warm slots hand frames back at frame boundaries to jobs this much higher');
  return new PreemptionWatch({ gap, queue: env.queue, jobs: env.jobs, tags, log });
}
