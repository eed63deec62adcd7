// Folds the progress events of a job's concurrently running chunks (one Blender process each)
// into the spec's JobProgress counters. Pure: time comes from an injectable clock, and nothing is
// stored or sent; the runtime calls `snapshot()` when it wants to publish.
import type { JobProgress } from '../../../shared/api/progress.js';
import type { JobStatus } from '../../../shared/job-status.js';
import type { ProgressEvent } from '../../../blender/render/progress-parser.js';

export interface ProgressTrackerOptions {
  jobId: string;
  /** Every frame the job renders (duplicates ignored). */
  frames: Iterable<number>;
  /** Chunks that can render at once; divides the ETA. Default 1. */
  slots?: number;
  /** Frames already rendered (a resumed job). Default none. */
  doneFrames?: Iterable<number>;
  /** Clock in ms. Default `Date.now`. */
  now?: () => number;
}

interface ChunkState {
  /** Frame in flight, or null between frames. */
  frame: number | null;
  startedAt: number;
  /** When this chunk last finished a frame: the next frame's time runs from here (it includes sync). */
  lastFinishAt: number | null;
  sampleDone: number | null;
  sampleTotal: number | null;
  /** Highest sample fraction seen for the frame in flight; stereo restarts samples per view, percent must not dip. */
  fraction: number;
  /** Order of the latest frame start, to tell which in-flight frame is the "current" one. */
  seq: number;
}

export class ProgressTracker {
  private readonly jobId: string;
  private readonly frames: ReadonlySet<number>;
  private readonly slots: number;
  private readonly now: () => number;
  private readonly done = new Set<number>();
  private readonly failed = new Set<number>();
  private readonly chunks = new Map<string, ChunkState>();
  private seq = 0;
  private frameSecondsSum = 0;
  private frameSecondsCount = 0;
  private updatedAt: number | null = null;
  /**
   * Highest percent published. A frame Blender finished counts as done only once its files are
   * moved, and by then the next frame may have started (its own share at 0): without this floor
   * the bar would step back for a moment. A failed chunk's lost share also waits, never dips.
   */
  private percentFloor = 0;

  constructor(opts: ProgressTrackerOptions) {
    this.jobId = opts.jobId;
    this.frames = new Set(opts.frames);
    this.slots = Math.max(1, Math.trunc(opts.slots ?? 1));
    this.now = opts.now ?? Date.now;
    for (const f of opts.doneFrames ?? []) if (this.frames.has(f)) this.done.add(f);
  }

  /** Frames rendered so far (for `remainingChunk` on retry). */
  get doneFrames(): ReadonlySet<number> {
    return this.done;
  }

  /** True once every frame is done. */
  get complete(): boolean {
    return this.done.size === this.frames.size;
  }

  /** Applies one parsed event of chunk `chunkId` (any stable id of the Blender process). */
  apply(chunkId: string, ev: ProgressEvent): void {
    const t = this.now();
    this.updatedAt = t;
    let c = this.chunks.get(chunkId);
    if (!c) {
      c = { frame: null, startedAt: t, lastFinishAt: null, sampleDone: null, sampleTotal: null, fraction: 0, seq: 0 };
      this.chunks.set(chunkId, c);
    }
    switch (ev.type) {
      case 'frameStarted':
        Object.assign(c, {
          frame: ev.frame,
          startedAt: t,
          sampleDone: null,
          sampleTotal: null,
          fraction: 0,
          seq: ++this.seq,
        });
        this.failed.delete(ev.frame);
        break;
      case 'sample':
        if (c.frame !== ev.frame || ev.total <= 0) break;
        c.sampleDone = Math.max(0, ev.done);
        c.sampleTotal = ev.total;
        c.fraction = Math.max(c.fraction, Math.min(1, ev.done / ev.total));
        break;
      case 'frameFinished': {
        if (this.frames.has(ev.frame)) this.done.add(ev.frame);
        this.failed.delete(ev.frame);
        // Wall-clock time per frame is what the ETA needs; Blender's own figure can read 0 in a
        // run of frames, so it is only the fallback (e.g. under a frozen clock).
        const wall = (t - (c.lastFinishAt ?? c.startedAt)) / 1000;
        const seconds = wall > 0 ? wall : ev.seconds;
        if (seconds > 0) {
          this.frameSecondsSum += seconds;
          this.frameSecondsCount++;
        }
        c.lastFinishAt = t;
        // The worker applies a finish only once the frame's files are moved, which can be after
        // Blender has started the next frame: that frame stays in flight (resetting it would show
        // nothing rendering, drop its samples, and not count it as failed if Blender died on it).
        if (c.frame === null || c.frame === ev.frame)
          Object.assign(c, { frame: null, sampleDone: null, sampleTotal: null, fraction: 0 });
        break;
      }
      default:
        break;
    }
  }

  /**
   * The chunk's process ended. When it failed, its frame in flight counts as failed until a retry
   * starts it again; frames it never reached are simply not done.
   */
  chunkEnded(chunkId: string, failed: boolean): void {
    const c = this.chunks.get(chunkId);
    this.updatedAt = this.now();
    if (c && failed && c.frame !== null && !this.done.has(c.frame)) this.failed.add(c.frame);
    this.chunks.delete(chunkId);
  }

  /** Frames another process finished (found in `out/`): done here too. */
  addDone(frames: Iterable<number>): void {
    for (const f of frames) {
      if (!this.frames.has(f) || this.done.has(f)) continue;
      this.done.add(f);
      this.failed.delete(f);
      this.updatedAt = this.now();
    }
  }

  /** Marks frames as failed for good (e.g. retries exhausted). */
  markFailed(frames: Iterable<number>): void {
    this.updatedAt = this.now();
    for (const f of frames) if (this.frames.has(f) && !this.done.has(f)) this.failed.add(f);
  }

  /** Mean wall-clock seconds per frame so far, or null before the first finished frame. */
  get meanFrameSeconds(): number | null {
    return this.frameSecondsCount > 0 ? this.frameSecondsSum / this.frameSecondsCount : null;
  }

  /** The counters now, in the spec's shape. */
  snapshot(status: JobStatus): JobProgress {
    const total = this.frames.size;
    const inFlight = [...this.chunks.values()].filter((c) => c.frame !== null && !this.done.has(c.frame));
    const current = inFlight.reduce<ChunkState | null>(
      (best, c) => (best === null || c.seq > best.seq ? c : best),
      null,
    );
    const partial = inFlight.reduce((n, c) => n + c.fraction, 0);
    const doneWork = Math.min(total, this.done.size + partial);
    const percent = total === 0 ? 100 : Math.max(this.percentFloor, round1((doneWork / total) * 100));
    this.percentFloor = percent;
    const mean = this.meanFrameSeconds;
    const left = total - doneWork;
    // Remaining work spread over the slots, but never over more slots than frames left.
    const parallel = Math.max(1, Math.min(this.slots, Math.ceil(left)));
    const eta = left <= 0 ? 0 : mean === null ? null : round1((left * mean) / parallel);
    return {
      jobId: this.jobId,
      status,
      framesTotal: total,
      framesDone: this.done.size,
      framesRendering: inFlight.length,
      framesFailed: this.failed.size,
      currentFrame: current?.frame ?? null,
      currentSample: current?.sampleDone ?? null,
      samplesTotal: current?.sampleTotal ?? null,
      percent: Math.min(100, Math.max(0, percent)),
      etaSeconds: eta,
      updatedAt: this.updatedAt === null ? null : new Date(this.updatedAt).toISOString(),
    };
  }
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
