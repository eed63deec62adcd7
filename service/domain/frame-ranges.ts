// Frame lists and render chunks. A job's frames come from the spec's `frameRanges` ("5", "1-10",
// "1-20x2"); the worker renders them in chunks (tasks). In chunked mode a chunk is ONE Blender
// process started with `-s START -e END -j STEP -a`: starting Blender costs about 1.6 s, so chunks
// must be long enough to amortise it, yet short enough that every render slot gets work and a
// crash loses little (chunkFrames). In warm mode the scene stays loaded between chunks, which
// shrink to single frames as the job ends so that every slot finishes at about the same time
// (guidedChunks).
import { markFrames, MAX_FRAME, parseFrameRange, selectFrames } from './frame-selection.js';

/** Frames one Blender process renders: `frames` is exactly `start, start+step, ..., end`. */
export interface FrameChunk {
  start: number;
  end: number;
  step: number;
  frames: number[];
}

/**
 * How many distinct frames `ranges` select, worked out on intervals (never frame by frame beyond
 * the ranges a plain interval does not already hold): 100 copies of "0-1048574" cost one interval.
 */
export function countFrames(ranges: readonly string[]): number {
  return selectFrames(ranges.map(parseFrameRange)).count;
}

/**
 * All frames of `ranges`, sorted and de-duplicated. `maxFrames` (default 1,048,575, one per
 * possible frame) bounds the list so a request cannot make the worker allocate without limit; it
 * is checked on the ranges as intervals (countFrames) before any frame is listed.
 */
export function expandFrameRanges(ranges: readonly string[], maxFrames = MAX_FRAME + 1): number[] {
  const sel = selectFrames(ranges.map(parseFrameRange));
  if (sel.count > maxFrames) throw new RangeError(`frame ranges select more than ${maxFrames} frames`);
  if (sel.stepped.length === 0) {
    const out = new Array<number>(sel.count);
    let i = 0;
    for (const [a, b] of sel.intervals) for (let f = a; f <= b; f++) out[i++] = f;
    return out;
  }
  const marks = markFrames(sel);
  const out: number[] = [];
  for (let f = 0; f < marks.length; f++) if (marks[f]) out.push(f);
  return out;
}

/**
 * Frames of the scene's own range (`renderFrameRange` [start, end] and `frameStep`), for jobs without `frameRanges`.
 */
export function sceneFrames(renderFrameRange: readonly number[], frameStep = 1): number[] {
  const [start, end] = renderFrameRange;
  if (start === undefined || end === undefined) return [];
  const from = Math.max(0, Math.trunc(start));
  const to = Math.min(MAX_FRAME, Math.trunc(end));
  if (to < from) return [];
  return expandFrameRanges([`${from}-${to}x${Math.max(1, Math.trunc(frameStep))}`]);
}

/**
 * Splits sorted, unique frames into maximal arithmetic runs (same step between neighbours), the
 * unit Blender's `-s/-e/-j` can express. Greedy from the left: 1,2,3,5,7,9 gives 1-3 and 5-9x2.
 */
export function frameRuns(frames: readonly number[]): FrameChunk[] {
  const runs: FrameChunk[] = [];
  let i = 0;
  while (i < frames.length) {
    const first = frames[i] as number;
    const second = frames[i + 1];
    if (second === undefined) {
      runs.push({ start: first, end: first, step: 1, frames: [first] });
      break;
    }
    const step = second - first;
    let j = i + 1;
    while (j + 1 < frames.length && (frames[j + 1] as number) - (frames[j] as number) === step) j++;
    runs.push(makeChunk(first, frames[j] as number, step));
    i = j + 1;
  }
  return runs;
}

/** Renders `start..end` every `step` frames; `end` must be reachable from `start`. */
function makeChunk(start: number, end: number, step: number): FrameChunk {
  const frames: number[] = [];
  for (let f = start; f <= end; f += step) frames.push(f);
  return { start, end, step: start === end ? 1 : step, frames };
}

export interface ChunkOptions {
  /** Blender processes that can run at once (render slots); at least 1. Default 1. */
  slots?: number;
  /**
   * Smallest chunk worth a Blender start. Default 8: at ~1.6 s per start and frames of 1 s or
   * more, startup stays under about 20% of a chunk's time. A run shorter than this is one chunk.
   */
  minChunk?: number;
  /** Largest chunk, bounding the work a crash or a retry repeats and keeping slots balanced. Default 50. */
  maxChunk?: number;
}

/**
 * Splits frames into chunks, each a same-step run for one Blender process.
 *
 * Rule: target size = ceil(frames / slots), clamped to [minChunk, maxChunk]. With enough frames
 * every slot gets at least one chunk (parallelism first); with few frames the chunks stay at
 * minChunk (fewer processes, because a start costs more than the parallelism wins); on long
 * jobs maxChunk keeps pieces small enough to rebalance and retry. Each run is then cut into
 * ceil(length / size) near-equal pieces, so there are no tiny tail chunks.
 */
export function chunkFrames(frames: readonly number[], opts: ChunkOptions = {}): FrameChunk[] {
  const slots = Math.max(1, Math.trunc(opts.slots ?? 1));
  const minChunk = Math.max(1, Math.trunc(opts.minChunk ?? 8));
  const maxChunk = Math.max(minChunk, Math.trunc(opts.maxChunk ?? 50));
  const unique = [...new Set(frames)].sort((a, b) => a - b);
  const size = Math.min(maxChunk, Math.max(minChunk, Math.ceil(unique.length / slots)));
  const chunks: FrameChunk[] = [];
  for (const run of frameRuns(unique)) {
    const pieces = Math.ceil(run.frames.length / size);
    const base = Math.floor(run.frames.length / pieces);
    let extra = run.frames.length % pieces;
    let at = 0;
    for (let p = 0; p < pieces; p++) {
      const len = base + (extra > 0 ? 1 : 0);
      if (extra > 0) extra--;
      const part = run.frames.slice(at, at + len);
      at += len;
      chunks.push(makeChunk(part[0] as number, part[part.length - 1] as number, run.step));
    }
  }
  return chunks;
}

export interface GuidedOptions {
  /** Slots the planner knows of (its own); the tail of single frames is two per slot. Default 1. */
  slots?: number;
  /** Largest chunk. Default 8. */
  maxChunk?: number;
  /**
   * The farm is known to have this one render slot (the worker registry says so): no other slot
   * to finish with, so every chunk is `maxChunk` frames and there is no tail of single frames (each
   * chunk is a task and a render call: 24 frames in 6 calls took about 40 ms more in Blender than in one, on a
   * scene without persistent data). A slot that joins mid-job still finds chunks to claim. Default false.
   */
  alone?: boolean;
}

/**
 * Chunks for slots that claim them one after another and keep the scene loaded between them
 * (warm mode): guided self-scheduling by factoring. Each chunk takes ceil(left / (2 x slots)) of
 * the frames still unassigned, at most `maxChunk`, so the first chunks spread the per-task cost
 * over several frames and the last ones are single frames: every slot finishes within about a
 * frame of the others. Half of what is left per slot, not less: each task costs the worker a claim,
 * a job read, a log and a commit (about 10 ms of CPU beside Blender on the small bench job), and a
 * quarter made 9 tasks of 24 frames where a half makes 6, ending the same way. Chunks follow the
 * same-step runs of `frames` (each is one render call).
 */
export function guidedChunks(frames: readonly number[], opts: GuidedOptions = {}): FrameChunk[] {
  const slots = Math.max(1, Math.trunc(opts.slots ?? 1));
  const maxChunk = Math.max(1, Math.trunc(opts.maxChunk ?? 8));
  const unique = [...new Set(frames)].sort((a, b) => a - b);
  let left = unique.length;
  const chunks: FrameChunk[] = [];
  for (const run of frameRuns(unique)) {
    let at = 0;
    while (at < run.frames.length) {
      const share = opts.alone ? maxChunk : Math.max(1, Math.ceil(left / (2 * slots)));
      const size = Math.min(maxChunk, share, run.frames.length - at);
      const part = run.frames.slice(at, at + size);
      chunks.push(makeChunk(part[0] as number, part[part.length - 1] as number, run.step));
      at += size;
      left -= size;
    }
  }
  return chunks;
}

/**
 * What is left of `chunk` once `doneFrames` are rendered, as chunks to run again (a retry renders
 * only unfinished frames). Usually one chunk (the tail after the crash); several when done frames
 * are not a prefix; empty when everything is done.
 */
export function remainingChunk(chunk: FrameChunk, doneFrames: Iterable<number>): FrameChunk[] {
  const done = doneFrames instanceof Set ? (doneFrames as ReadonlySet<number>) : new Set(doneFrames);
  const left = chunk.frames.filter((f) => !done.has(f));
  const chunks: FrameChunk[] = [];
  let i = 0;
  // Consecutive leftovers (in chunk order) keep the chunk's step; a gap starts a new chunk.
  while (i < left.length) {
    let j = i;
    while (j + 1 < left.length && (left[j + 1] as number) - (left[j] as number) === chunk.step) j++;
    chunks.push(makeChunk(left[i] as number, left[j] as number, chunk.step));
    i = j + 1;
  }
  return chunks;
}

/** Compact ranges for a frame list (e.g. finalConfig.frameRanges): [1,2,3,5,7,9] -> ["1-3", "5-9x2"]. */
export function formatFrameRanges(frames: readonly number[]): string[] {
  // Lists from expandFrameRanges are sorted and unique already: sorting a million frames again
  // would hold the event loop for a tenth of a second (a requeue naming every frame).
  let ordered = true;
  for (let i = 1; i < frames.length && ordered; i++) ordered = frames[i - 1]! < frames[i]!;
  const sorted = ordered ? frames : [...new Set(frames)].sort((a, b) => a - b);
  return frameRuns(sorted).map((r) =>
    r.start === r.end ? `${r.start}` : r.step === 1 ? `${r.start}-${r.end}` : `${r.start}-${r.end}x${r.step}`,
  );
}
