// Frame time along the timeline from a few measured frames (an estimate's warm samples): the
// piecewise-linear line through them. A fitted straight line (frame-trend.ts) misses a heavy
// region in the middle of a shot (a camera flying into glass and out again) and the 4^level growth
// of subdivision; a line through every sample follows both, and more samples where neighbours
// differ (estimate-samples.ts) make it follow closer. The same profile, scaled by what the render's
// own frames took against it, is the live ETA's shape once an estimate exists. Pure.
import type { EtaBand } from './frame-eta.js';
import type { FrameSample } from './frame-trend.js';

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

/** Seconds of `frame` on the line through the samples, and the lower and higher of its two neighbours. */
export function profileAt(sorted: readonly FrameSample[], frame: number): { value: number; low: number; high: number } {
  const [a, b] = around(sorted, frame);
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
): { value: number; low: number; high: number } | null {
  const sorted = clean(samples);
  if (sorted.length === 0) return null;
  const sum = { value: 0, low: 0, high: 0 };
  for (const f of frames) {
    const p = profileAt(sorted, f);
    sum.value += p.value;
    sum.low += p.low;
    sum.high += p.high;
  }
  return sum;
}

/**
 * The ETA of `framesLeft` frames (fractional, as etaBand) numbered `remaining`, on `slots` slots,
 * from the estimate's profile scaled by what the render's own frames (`done`) took against it:
 * the profile says where the timeline gets dearer, the render's frames say how fast this run goes.
 * The band: the neighbours' envelope, widened by the done frames' scatter around the scaled
 * profile (FRAME_NOISE before any) and 1/sqrt(samples). Null without a sample.
 */
export function profileEta(
  samples: readonly FrameSample[],
  done: readonly FrameSample[],
  remaining: readonly number[],
  framesLeft: number,
  slots: number,
): EtaBand | null {
  const sorted = clean(samples);
  if (sorted.length === 0) return null;
  const left = Math.max(0, framesLeft);
  const slotCount = Math.max(1, Math.trunc(slots) || 1);
  if (left === 0 || remaining.length === 0)
    return { seconds: 0, lowSeconds: 0, highSeconds: 0, samples: sorted.length, slots: 1 };
  const seen = clean(done);
  const expected = seen.map((d) => profileAt(sorted, d.frame).value);
  const sumExpected = expected.reduce((a, b) => a + b, 0);
  const sumSeen = seen.reduce((a, d) => a + d.seconds, 0);
  // Clamped: a profile measured on another run of the same machine is off by load, not by 10x.
  const scale = sumExpected > 0 && sumSeen > 0 ? Math.min(4, Math.max(0.25, sumSeen / sumExpected)) : 1;
  const ratios = seen.map((d, i) => (expected[i]! > 0 ? d.seconds / (expected[i]! * scale) : 1));
  const scatter =
    ratios.length > 1 ? Math.sqrt(ratios.reduce((a, r) => a + (r - 1) ** 2, 0) / (ratios.length - 1)) : FRAME_NOISE;
  const sum = profileSum(sorted, remaining)!;
  // Fractional frames: the frames in flight count by the share still to render.
  const share = left / remaining.length;
  const parallel = Math.max(1, Math.min(slotCount, left));
  const r = Math.max(FRAME_NOISE, scatter) + 0.5 / Math.sqrt(sorted.length);
  const at = (s: number) => (s * scale * share) / parallel;
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
