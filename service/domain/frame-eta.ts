// Frame statistics in numbers a user reads: the summary of a job's finished frames (GET
// /jobs/{id}/frames) and the live ETA with its band (GET /jobs/{id}/progress). Pure: the clock
// and the rows come in as arguments.
import type { FrameTime } from '../ports/frame-stats.js';

/** A slot counts as working on the job while its last frame finished within this many of the job's slow frames. */
const ACTIVE_WINDOW_FRAMES = 3;
/** ...and never less than this, so a slot between two quick frames is not dropped. */
const MIN_ACTIVE_WINDOW_MS = 30_000;

export interface FrameSummary {
  /** Distinct frames with a row (a frame rendered twice counts once). */
  framesDone: number;
  /** Median, 10th and 90th percentile of the seconds per frame; null before the first frame. */
  medianSeconds: number | null;
  p10Seconds: number | null;
  p90Seconds: number | null;
  /** Highest peak memory of any frame, null when no frame reported one. */
  peakMemoryMaxBytes: number | null;
}

export interface EtaBand {
  /** Seconds until the last frame is done, from the mean time per frame. */
  seconds: number;
  /** The band: the end should fall between these (seconds from now). */
  lowSeconds: number;
  highSeconds: number;
  /** Frames the figures rest on. */
  samples: number;
  /** Slots the remaining frames were divided among. */
  slots: number;
}

/** The q-quantile (0-1) of sorted values, linearly interpolated. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export function summarizeFrames(
  rows: readonly Pick<FrameTime, 'frame' | 'renderSeconds' | 'peakMemoryBytes'>[],
): FrameSummary {
  const seconds = rows.map((r) => r.renderSeconds).sort((a, b) => a - b);
  const memory = rows.flatMap((r) => (r.peakMemoryBytes === null ? [] : [r.peakMemoryBytes]));
  const q = (p: number) => (seconds.length ? round2(quantile(seconds, p)) : null);
  return {
    framesDone: new Set(rows.map((r) => r.frame)).size,
    medianSeconds: q(0.5),
    p10Seconds: q(0.1),
    p90Seconds: q(0.9),
    peakMemoryMaxBytes: memory.length ? Math.max(...memory) : null,
  };
}

/**
 * The rows the live ETA rests on: the render's own frames, not those an estimate sampled and kept
 * (`kept`: the estimate's frames). Those were rendered cold, each pair in a fresh Blender of its own:
 * such a frame took 0.9 s where the render's warm frames took 0.2 s (the Sculpting template at 64x48,
 * bench:estimate), and three of them among a quarter of a 48-frame job put the ETA 90 % too late.
 */
export function renderRows<T extends Pick<FrameTime, 'frame'>>(
  rows: readonly T[],
  kept: readonly number[] | undefined,
): T[] {
  const skip = new Set(kept ?? []);
  return skip.size ? rows.filter((r) => !skip.has(r.frame)) : [...rows];
}

/**
 * Slots working on the job now: those that finished a frame within the last few slow frames'
 * time (at least 30 s). At least 1: a job whose slots all went quiet still has an ETA.
 */
export function activeSlots(
  rows: readonly Pick<FrameTime, 'renderSeconds' | 'slot' | 'finishedAt'>[],
  now: number,
): number {
  if (rows.length === 0) return 1;
  const slow = quantile(
    rows.map((r) => r.renderSeconds).sort((a, b) => a - b),
    0.9,
  );
  const window = Math.max(MIN_ACTIVE_WINDOW_MS, ACTIVE_WINDOW_FRAMES * slow * 1000);
  const recent = new Set(rows.filter((r) => now - Date.parse(r.finishedAt) <= window).map((r) => r.slot));
  return Math.max(1, recent.size);
}

/**
 * The time left for `framesLeft` frames (fractional: a frame half rendered is half a frame) on
 * `slots` slots, from the seconds per frame seen so far.
 * The centre is the mean (the remaining frames' sum is what matters); the band is multiplicative,
 * `centre / (1 + r)` to `centre * (1 + r)`, with r = the frame times' coefficient of variation
 * plus 1/sqrt(samples): frames along a timeline vary together (a heavy region lasts several
 * frames), so the spread of single frames is kept rather than divided by sqrt(framesLeft), and
 * a few samples widen it (one frame: half to twice the centre). Null before the first frame.
 */
export function etaBand(seconds: readonly number[], framesLeft: number, slots: number): EtaBand | null {
  const samples = seconds.filter((s) => Number.isFinite(s) && s >= 0);
  if (samples.length === 0) return null;
  // Fractional: frames in flight count by the share still to render.
  const left = Math.max(0, framesLeft);
  const slotCount = Math.max(1, Math.trunc(slots) || 1);
  // Fewer frames left than slots take one frame's time, not a fraction of it.
  const parallel = Math.max(1, Math.min(slotCount, left));
  if (left === 0) return { seconds: 0, lowSeconds: 0, highSeconds: 0, samples: samples.length, slots: 1 };
  const k = samples.length;
  const mean = samples.reduce((a, b) => a + b, 0) / k;
  const variance = k > 1 ? samples.reduce((a, s) => a + (s - mean) ** 2, 0) / (k - 1) : 0;
  const cv = mean > 0 ? Math.sqrt(variance) / mean : 0;
  const r = cv + 1 / Math.sqrt(k);
  const centre = (left * mean) / parallel;
  return {
    seconds: round1(centre),
    lowSeconds: round1(centre / (1 + r)),
    highSeconds: round1(centre * (1 + r)),
    samples: k,
    slots: Math.max(1, Math.min(slotCount, Math.ceil(left))),
  };
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
