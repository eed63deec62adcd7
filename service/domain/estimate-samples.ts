// Which frames an estimate renders (extension estimate): first, middle and last of the job's
// frame list, then, once those are measured, more frames between two samples whose times differ
// a lot, where the timeline changes most. On a job long enough, each sample is rendered as a pair
// of neighbouring frames in one Blender run, and the second one is the sample: a frame alone in a
// fresh Blender pays that run's warm-up (kernels, images, shaders: 0.9 s against 0.2 s for the
// Sculpting template at 64x48 here, 14 s against 0.1 s for EEVEE), which the render pays once per
// slot, not per frame. Pure.

/** Frames the first pass renders at most: first, middle and last (fewer for a shorter job). */
export const FIRST_PASS = 3;

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
 * Jobs of at least this many frames sample in pairs (pairPartner): the second frame of a pair costs
 * little beside the run's load, and a cold frame would stand for every frame of a long job.
 */
export const WARM_PAIR_MIN_FRAMES = 12;

/**
 * The frame rendered with `frame` so that one of the two is warm: the job's next frame, else its
 * previous one (the last frame), unless `taken` has it; null when neither is free. The pair renders
 * in the job's order, and its later frame is the sample.
 */
export function pairPartner(frames: readonly number[], frame: number, taken: ReadonlySet<number>): number | null {
  const i = frames.indexOf(frame);
  if (i < 0) return null;
  for (const j of [i + 1, i - 1]) {
    const f = frames[j];
    if (f !== undefined && !taken.has(f) && f !== frame) return f;
  }
  return null;
}

/**
 * The first pass: first, middle and last of `frames` (in the job's order), without repeats.
 * `frames` is the job's frame list; an empty list picks nothing.
 */
export function firstSampleFrames(frames: readonly number[]): number[] {
  if (frames.length === 0) return [];
  const idx = [0, Math.floor((frames.length - 1) / 2), frames.length - 1];
  return [...new Set(idx.map((i) => frames[i]!))];
}

export interface MeasuredFrame {
  frame: number;
  seconds: number;
}

/**
 * The second pass: for each pair of neighbouring measured frames whose times differ by more than
 * REFINE_RATIO and could move the estimate by more than REFINE_MIN_SECONDS, the job's frame half way between them (when one lies strictly between), the
 * pairs with the largest difference first, `max` at most. Nothing already measured comes back.
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
