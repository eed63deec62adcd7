// Which frames an estimate renders (extension estimate), all in one warm Blender run: on a job
// long enough, the job's first frame first, cold (a fresh Blender's first frame pays its warm-up:
// 0.9 s against 0.2 s for the Sculpting template at 64x48 here, 14 s against 0.1 s for EEVEE),
// then the samples, warm as the render's frames are: the second frame, the quarters and the last;
// then, once those are measured, more frames between two samples whose times differ a lot, where
// the timeline changes most. The cold frame's excess over the second is the warm-up the render
// pays once per slot. Pure.

/** Frames the first pass renders at most: first, middle and last (fewer for a shorter job). */
export const FIRST_PASS = 3;

/** Jobs of at least this many frames sample the quarters too: a heavy region between first, middle and last shows. */
export const QUARTERS_MIN_FRAMES = 40;

/** Two neighbouring samples whose times differ by more than this factor get a frame between them. */
export const REFINE_RATIO = 1.5;

/**
 * ...and only where the difference can move the estimate by more than this many seconds: the
 * difference times half the frames between the two. Below it a difference is scheduling noise (a
 * loaded machine makes a 0.05 s frame take 0.1 s, two frames apart in a 5-frame job), and the scene
 * load dominates. The difference alone (1 s, before) left a 120-frame job whose frames go from 0.3 s
 * to 0.9 s unrefined, though its middle could move the estimate by 18 s.
 */
export const REFINE_MIN_SECONDS = 1;

/**
 * Jobs of at least this many frames render their first frame cold, as a lead (leadFrame), before
 * the samples: the second frame costs little beside the run's load, and a cold first sample would
 * stand for a whole stretch of a long job. A shorter job's first sample is its cold frame, as the
 * render's first frame is; the sample budget (sampleBudget) keeps its warm-up from asking for more.
 */
export const WARM_PAIR_MIN_FRAMES = 12;

/** The frame rendered first and cold, not a sample (its excess is the warm-up): the first, on a long enough job. */
export function leadFrame(frames: readonly number[]): number | null {
  return frames.length >= WARM_PAIR_MIN_FRAMES ? frames[0]! : null;
}

/**
 * The first pass, in the order rendered: first (the second frame behind a lead), the quarters on a
 * job of QUARTERS_MIN_FRAMES or more, middle and last of `frames` (in the job's order), without
 * repeats. `frames` is the job's frame list; an empty list picks nothing.
 */
export function firstSampleFrames(frames: readonly number[]): number[] {
  if (frames.length === 0) return [];
  const n = frames.length - 1;
  const first = leadFrame(frames) === null ? 0 : 1;
  const points = frames.length >= QUARTERS_MIN_FRAMES ? [0.25, 0.5, 0.75] : [0.5];
  const idx = [first, ...points.map((p) => first + Math.floor((n - first) * p)), n];
  return [...new Set(idx.map((i) => frames[i]!))];
}

/**
 * Of a job's frames, the share an estimate renders at most (lead, run-ups, first pass and
 * refinement together): the estimate's own cost stays near a tenth of a long job's render, with the
 * run's load on top.
 */
export const SAMPLE_SHARE = 0.08;

/** Frames an estimate of a job of `frames` frames renders at most. */
export function sampleBudget(frames: number): number {
  return Math.floor(frames * SAMPLE_SHARE);
}

/**
 * The frame rendered just before `sample` in the same Blender, on a job long enough to have a lead:
 * the job's previous frame, unless taken. Jumping along the timeline, a sample is the first frame
 * at its point (a new subdivision level, particles born since, EEVEE's batches), which the render's
 * consecutive frames pay once; behind its run-up it costs what they cost. Null without one.
 */
export function runUpFrame(frames: readonly number[], sample: number, taken: ReadonlySet<number>): number | null {
  if (frames.length < WARM_PAIR_MIN_FRAMES) return null;
  const i = frames.indexOf(sample);
  const p = i > 0 ? frames[i - 1]! : undefined;
  return p === undefined || taken.has(p) ? null : p;
}

export interface MeasuredFrame {
  frame: number;
  seconds: number;
}

/**
 * The second pass: for each pair of neighbouring measured frames whose times differ by more than
 * REFINE_RATIO and could move the estimate by more than REFINE_MIN_SECONDS, the job's frame half way between them (when
 * one lies strictly between), the pairs with the largest difference first, `max` at most. Nothing already measured
 * comes back.
 */
export function refineSampleFrames(
  frames: readonly number[],
  measured: readonly MeasuredFrame[],
  max: number,
): number[] {
  if (max <= 0 || measured.length < 2) return [];
  const position = new Map(frames.map((f, i) => [f, i] as const));
  const done = new Set(measured.map((m) => m.frame));
  const sorted = measured
    .filter((m) => position.has(m.frame))
    .sort((a, b) => position.get(a.frame)! - position.get(b.frame)!);
  const gaps: { ratio: number; frame: number }[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!;
    const b = sorted[i]!;
    const lo = Math.max(Math.min(a.seconds, b.seconds), 1e-6);
    const ratio = Math.max(a.seconds, b.seconds) / lo;
    const ia = position.get(a.frame)!;
    const ib = position.get(b.frame)!;
    const moves = (Math.abs(a.seconds - b.seconds) * (ib - ia - 1)) / 2;
    if (ratio <= REFINE_RATIO || moves <= REFINE_MIN_SECONDS || ib - ia < 2) continue;
    const mid = frames[Math.floor((ia + ib) / 2)]!;
    if (!done.has(mid)) gaps.push({ ratio, frame: mid });
  }
  return [...new Set(gaps.sort((x, y) => y.ratio - x.ratio).map((g) => g.frame))].slice(0, max);
}
