// Where a job's frame cost changes in steps: the frames at which an animated integer or boolean
// property changes value (a keyframed Subdivision level, a particle count, a render toggle), read
// from the analysis (blender/analysis/analyze_steps.py). Between two steps every such property holds
// its value, so the frames of one segment cost alike, and a profile must not draw a line across a
// step (frame-profile.ts); the estimate places its samples in distinct segments (estimate-samples.ts).
// Pure.

/** More step frames than this and they are ignored: a property changing that often (a seed) is no step function. */
export const MAX_STEP_FRAMES = 16;

/** The analysis's animations, as far as steps go (shared/api/scene.ts's AnimationInfo). */
export interface SteppedAnimation {
  fcurves: readonly { data_path: string; steps?: readonly { frame: number; value: number }[] | undefined }[];
}

/**
 * The frames, after the job's first and up to its last, at which any animated integer or boolean
 * property takes a new value, sorted; none when there are more than MAX_STEP_FRAMES.
 */
export function stepFrames(animations: readonly SteppedAnimation[] | undefined, frames: readonly number[]): number[] {
  if (!animations?.length || frames.length === 0) return [];
  const lo = Math.min(...frames.slice(0, 1));
  const hi = frames.at(-1)!;
  const set = new Set<number>();
  for (const a of animations)
    for (const c of a.fcurves)
      for (const s of (c.steps ?? []).slice(1)) if (s.frame > lo && s.frame <= hi) set.add(s.frame);
  return set.size > MAX_STEP_FRAMES ? [] : [...set].sort((a, b) => a - b);
}

/** The segment `frame` lies in: how many steps are at or before it (0 before the first). */
export function segmentOf(steps: readonly number[], frame: number): number {
  let lo = 0;
  let hi = steps.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (steps[mid]! <= frame) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
