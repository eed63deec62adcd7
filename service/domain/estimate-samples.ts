// Which frames an estimate renders (extension estimate): first, middle and last of the job's
// frame list, then, once those are measured, more frames between two samples whose times differ
// a lot, where the timeline changes most. Pure.

/** Frames the first pass renders at most: first, middle and last (fewer for a shorter job). */
export const FIRST_PASS = 3;

/** Two neighbouring samples whose times differ by more than this factor get a frame between them. */
export const REFINE_RATIO = 1.5;

/**
 * ...and by more than this many seconds. Below it a difference is scheduling noise (a loaded
 * machine makes a 0.05 s frame take 0.1 s), and it moves no estimate: the scene load dominates.
 */
export const REFINE_MIN_SECONDS = 1;

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
 * REFINE_RATIO and by more than REFINE_MIN_SECONDS, the job's frame half way between them (when one lies strictly between), the
 * pairs with the largest difference first, `max` at most. Nothing already measured comes back.
 */
export function refineSampleFrames(frames: readonly number[], measured: readonly MeasuredFrame[], max: number): number[] {
  if (max <= 0 || measured.length < 2) return [];
  const position = new Map(frames.map((f, i) => [f, i] as const));
  const done = new Set(measured.map((m) => m.frame));
  const sorted = measured.filter((m) => position.has(m.frame)).sort((a, b) => position.get(a.frame)! - position.get(b.frame)!);
  const gaps: { ratio: number; frame: number }[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!;
    const b = sorted[i]!;
    const lo = Math.max(Math.min(a.seconds, b.seconds), 1e-6);
    const ratio = Math.max(a.seconds, b.seconds) / lo;
    const ia = position.get(a.frame)!;
    const ib = position.get(b.frame)!;
    const apart = Math.abs(a.seconds - b.seconds);
    if (ratio <= REFINE_RATIO || apart <= REFINE_MIN_SECONDS || ib - ia < 2) continue;
    const mid = frames[Math.floor((ia + ib) / 2)]!;
    if (!done.has(mid)) gaps.push({ ratio, frame: mid });
  }
  return [...new Set(gaps.sort((x, y) => y.ratio - x.ratio).map((g) => g.frame))].slice(0, max);
}
