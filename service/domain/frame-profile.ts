// Frame time along the timeline from a few measured frames (an estimate's warm samples): the
// piecewise-linear line through them. A fitted straight line (frame-trend.ts) misses a heavy
// region in the middle of a shot (a camera flying into glass and out again) and the 4^level growth
// of subdivision; a line through every sample follows both, and more samples where neighbours
// differ (estimate-samples.ts) make it follow closer. The same profile, scaled by what the render's
// own frames took against it, is the live ETA's shape once an estimate exists. Pure.
import type { EtaBand } from './frame-eta.js';
import type { FrameSample } from './frame-trend.js';
import { guidedChunks } from './frame-ranges.js';
import { segmentOf } from './frame-steps.js';

/**
 * Relative noise of a single warm frame on a loaded machine (scheduling, caches), kept in every
 * band: two runs of the same frame differed by about this much here (bench:estimate, 2 shared cores).
 */
export const FRAME_NOISE = 0.1;

/** Samples with finite, non-negative times, sorted by frame; one per frame (the last measured). */
function clean(samples: readonly FrameSample[]): FrameSample[] {
  const byFrame = new Map<number, number>();
  for (const s of samples) if (Number.isFinite(s.seconds) && s.seconds >= 0) byFrame.set(s.frame, s.seconds);
  return [...byFrame.entries()].map(([frame, seconds]) => ({ frame, seconds })).sort((a, b) => a.frame - b.frame);
}

/** The two samples around `frame` (the same one twice beyond either end); `sorted` is not empty. */
function around(sorted: readonly FrameSample[], frame: number): [FrameSample, FrameSample] {
  if (frame <= sorted[0]!.frame) return [sorted[0]!, sorted[0]!];
  for (let i = 1; i < sorted.length; i++) {
    if (frame === sorted[i]!.frame) return [sorted[i]!, sorted[i]!];
    if (frame < sorted[i]!.frame) return [sorted[i - 1]!, sorted[i]!];
  }
  return [sorted.at(-1)!, sorted.at(-1)!];
}

/**
 * Seconds of `frame` on the line through the samples, and the lower and higher of its two neighbours.
 * With `steps` (frame-steps.ts: where an animated integer property changes), only the samples of the
 * frame's own segment count, held flat beyond them: no line is drawn across a step (a Subdivision
 * level's 4x). A segment without a sample takes the line across, as without steps.
 */
export function profileAt(
  sorted: readonly FrameSample[],
  frame: number,
  steps: readonly number[] = [],
): { value: number; low: number; high: number } {
  const seg = steps.length ? segmentOf(steps, frame) : 0;
  const own = steps.length ? sorted.filter((s) => segmentOf(steps, s.frame) === seg) : sorted;
  const [a, b] = around(own.length ? own : sorted, frame);
  const t = b.frame === a.frame ? 0 : (frame - a.frame) / (b.frame - a.frame);
  return {
    value: a.seconds + (b.seconds - a.seconds) * t,
    low: Math.min(a.seconds, b.seconds),
    high: Math.max(a.seconds, b.seconds),
  };
}

/** The sum of `frames` on the profile, with the sums of their lower and higher neighbours (the band's edges). */
export function profileSum(
  samples: readonly FrameSample[],
  frames: readonly number[],
  steps: readonly number[] = [],
): { value: number; low: number; high: number } | null {
  const sorted = clean(samples);
  if (sorted.length === 0) return null;
  const sum = { value: 0, low: 0, high: 0 };
  for (const f of frames) {
    const p = profileAt(sorted, f, steps);
    sum.value += p.value;
    sum.low += p.low;
    sum.high += p.high;
  }
  return sum;
}

/** Seconds of `frame` on the profile through `samples` (any order); null without a sample. */
export function profileValue(
  samples: readonly FrameSample[],
  frame: number,
  steps: readonly number[] = [],
): number | null {
  const sorted = clean(samples);
  return sorted.length ? profileAt(sorted, frame, steps).value : null;
}

/**
 * Render calls the render makes of `frames` on `slots` slots: warm slots take the planner's chunks
 * (guidedChunks, its default of 8 frames a chunk), each a render call whose setup its first frame pays.
 */
export function renderCalls(frames: readonly number[], slots: number): number {
  return frames.length ? guidedChunks(frames, { slots, alone: slots <= 1 }).length : 0;
}

/** The full render's Blender seconds as the samples predict them: every frame, a warm-up, each further call's setup. */
export function fullRenderSeconds(
  frames: readonly number[],
  samples: readonly FrameSample[],
  callSeconds: number,
  warmupSeconds: number,
  steps: readonly number[] = [],
): number {
  const sum = profileSum(samples, frames, steps);
  if (!sum) return 0;
  return sum.value + warmupSeconds + Math.max(0, renderCalls(frames, 1) - 1) * callSeconds;
}

/** The share of the job's frames the render has shown counts this much in the live ETA's pace (see profileEta). */
export const PACE_FRAME_WEIGHT = 0.5;

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2 : NaN;
};

/**
 * The ETA of `framesLeft` frames (fractional, as etaBand) numbered `remaining`, on `slots` slots,
 * from the estimate's profile of warm frames and the render's own frames (`done`): the profile says
 * where the timeline gets dearer; the render's frames over the profile at theirs say how fast this
 * run goes (a call's first frame or a spike left out), counted by the share of the work they showed.
 * Each render call still to start pays `callSeconds` in its first frame (the estimate measured it:
 * EEVEE's 1.3-1.7 s a call of 8 frames of 0.1-1.7 s), at the same pace. The band: the neighbours'
 * envelope, widened by the scatter of the render's frames around the profile (FRAME_NOISE before
 * any) and 1/sqrt(samples). `steps`: as profileAt's. Null without a sample.
 */
export function profileEta(
  samples: readonly FrameSample[],
  done: readonly FrameSample[],
  remaining: readonly number[],
  framesLeft: number,
  slots: number,
  callSeconds = 0,
  steps: readonly number[] = [],
): EtaBand | null {
  const sorted = clean(samples);
  if (sorted.length === 0) return null;
  const left = Math.max(0, framesLeft);
  const slotCount = Math.max(1, Math.trunc(slots) || 1);
  if (left === 0 || remaining.length === 0)
    return { seconds: 0, lowSeconds: 0, highSeconds: 0, samples: sorted.length, slots: 1 };
  // With steps, the frames of a segment without a sample of its own are left out: the line across the
  // step that stands in for them says nothing of the render's pace.
  const held = new Set(sorted.map((s) => segmentOf(steps, s.frame)));
  const all = clean(done);
  const measured = all.filter((d) => held.has(segmentOf(steps, d.frame)));
  const seen = steps.length && measured.length ? measured : all;
  const expected = seen.map((d) => profileAt(sorted, d.frame, steps).value);
  const ratios = seen.flatMap((d, i) => (expected[i]! > 0 ? [d.seconds / expected[i]!] : []));
  const typical = median(ratios);
  // The render's pace over the profile: its frames' sum over the profile's at theirs (the dear frames
  // weigh most), leaving out a call's first frame or a spike (over twice the typical ratio).
  const inliers = seen.flatMap((d, i) =>
    expected[i]! > 0 && d.seconds <= 2 * typical * expected[i]! ? [[d.seconds, expected[i]!] as const] : [],
  );
  const seenWork = inliers.reduce((a, [, e]) => a + e, 0);
  const pace = seenWork > 0 ? inliers.reduce((a, [t]) => a + t, 0) / seenWork : 1;
  const sum = profileSum(sorted, remaining, steps)!;
  // Blended with the profile by the share of the job's work the render has shown (its square root: a
  // quarter counts half): EEVEE's first quarter, frames of 0.1 s, ran 15-20 % off its samples where
  // the dear frames ahead ran as sampled, and taken alone it put the ETA 19 % early. But at least by
  // half the share of the job's frames it has shown (PACE_FRAME_WEIGHT): a whole run slower or faster
  // than its samples (the machine's load drifting between estimate and render) shows in cheap frames
  // as in dear ones, and where the first quarter was cheap (particles born over the shot, a camera
  // flying into the heavy part) the work share alone left the ETA as far off as the estimate (-15 %, +16 %).
  const frameShare = seen.length / Math.max(1, seen.length + left);
  const w = Math.sqrt(Math.max(seenWork / Math.max(1e-9, seenWork + sum.value), PACE_FRAME_WEIGHT * frameShare));
  // Clamped: a profile measured on another run of the same machine is off by load, not by 10x.
  const scale = Math.min(4, Math.max(0.25, 1 + (pace - 1) * w));
  // The calls in flight paid their setup already: one a slot.
  const setups = Math.max(0, renderCalls(remaining, slotCount) - slotCount) * Math.max(0, callSeconds);
  // The scatter about the median, robust as it is (the median absolute deviation, as a standard deviation).
  const scatter = ratios.length > 2 ? 1.4826 * median(ratios.map((r) => Math.abs(r / typical - 1))) : FRAME_NOISE;
  // Fractional frames: the frames in flight count by the share still to render.
  const share = left / remaining.length;
  const parallel = Math.max(1, Math.min(slotCount, left));
  const r = Math.max(FRAME_NOISE, scatter) + 0.5 / Math.sqrt(sorted.length);
  const at = (s: number) => ((s + setups) * scale * share) / parallel;
  const centre = at(sum.value);
  return {
    seconds: round1(centre),
    lowSeconds: round1(Math.min(centre, at(sum.low)) / (1 + r)),
    highSeconds: round1(Math.max(centre, at(sum.high)) * (1 + r)),
    samples: sorted.length + seen.length,
    slots: Math.max(1, Math.min(slotCount, Math.ceil(left))),
  };
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

/**
 * Rows without each slot's first frame of the job, which paid its Blender's warm-up (EEVEE's
 * shaders, seconds against tenths): the profile's scale rests on the warm ones. All rows while
 * fewer than three would be left.
 */
export function warmRows<T extends { slot: string; finishedAt: string }>(rows: readonly T[]): T[] {
  const first = new Map<string, T>();
  for (const r of rows) {
    const f = first.get(r.slot);
    if (!f || r.finishedAt < f.finishedAt) first.set(r.slot, r);
  }
  const warm = rows.filter((r) => first.get(r.slot) !== r);
  return warm.length >= 3 ? warm : [...rows];
}

/**
 * Rows with a render call's setup taken off the call's first frame. A slot's frame that does not
 * follow its previous one in the job's frame order (a preview frame first, a run after frames an
 * estimate kept) began a call of its own and paid its setup (EEVEE: 0.8-0.9 s against frames of
 * 0.06 s); the ETA adds the setups of the calls still to come by themselves (`callSeconds`), so
 * the render's pace must not count them again (bench:estimate: previews-first's lone last frame,
 * 1.97 s against 1.06 s sampled, put the EEVEE ETA at 25 % 26 % late). A call that starts where
 * the previous one ended (the next chunk) cannot be told apart here: profileEta leaves it out as
 * an outlier when its setup dwarfs its frame.
 */
export function lessCallSetup<T extends { frame: number; renderSeconds: number; slot: string; finishedAt: string }>(
  rows: readonly T[],
  frames: readonly number[],
  callSeconds: number | undefined,
): T[] {
  if (!callSeconds || callSeconds <= 0) return [...rows];
  const index = new Map(frames.map((f, i) => [f, i]));
  const previous = new Map<string, number>();
  const out = new Map<T, T>();
  for (const r of [...rows].sort((a, b) => a.finishedAt.localeCompare(b.finishedAt))) {
    const i = index.get(r.frame);
    const prev = previous.get(r.slot);
    if (i !== undefined) previous.set(r.slot, i);
    const starts = prev !== undefined && i !== undefined && i !== prev + 1;
    const trimmed = r.renderSeconds - callSeconds;
    out.set(r, starts && trimmed > 0 ? { ...r, renderSeconds: trimmed } : r);
  }
  return rows.map((r) => out.get(r)!);
}
