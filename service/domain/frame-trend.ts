// Frame times that change along the timeline (a camera flying into a heavy region, subdivision
// that grows): the mean of the frames so far then misses the frames still to come. This fits a
// line to seconds per frame number and, where the slope is real (|t| >= 2), predicts the frames
// left from it; the band spans both the line's and the plain mean's, so it holds whichever is
// right. Pure.
import { etaBand, type EtaBand } from './frame-eta.js';

/** A slope counts as real above this t statistic (about 95 % for a handful of frames and up). */
const MIN_T = 2;

export interface FrameSample {
  frame: number;
  seconds: number;
}

/** Least squares `seconds = a + b * frame`, with the slope's t statistic and the residuals' spread. */
export function fitLine(
  samples: readonly FrameSample[],
): { a: number; b: number; t: number; residualSd: number } | null {
  const k = samples.length;
  if (k < 3) return null;
  const mx = samples.reduce((s, p) => s + p.frame, 0) / k;
  const my = samples.reduce((s, p) => s + p.seconds, 0) / k;
  const sxx = samples.reduce((s, p) => s + (p.frame - mx) ** 2, 0);
  if (sxx === 0) return null;
  const b = samples.reduce((s, p) => s + (p.frame - mx) * (p.seconds - my), 0) / sxx;
  const a = my - b * mx;
  const sse = samples.reduce((s, p) => s + (p.seconds - a - b * p.frame) ** 2, 0);
  const residualSd = Math.sqrt(sse / (k - 2));
  const se = residualSd / Math.sqrt(sxx);
  return { a, b, t: se > 0 ? Math.abs(b) / se : b !== 0 ? Infinity : 0, residualSd };
}

/**
 * The ETA of `framesLeft` frames (fractional, as etaBand) whose numbers are `remaining`, on
 * `slots` slots. Without a real trend, etaBand's answer. With one, the centre is the line's
 * prediction for the remaining frames (kept within a quarter and four times the times seen, so a
 * steep start does not run away), and the band reaches from the lower to the higher of the two
 * models, each widened by its own spread and 1/sqrt(samples).
 */
export function trendEta(
  samples: readonly FrameSample[],
  remaining: readonly number[],
  framesLeft: number,
  slots: number,
): EtaBand | null {
  const flat = etaBand(
    samples.map((s) => s.seconds),
    framesLeft,
    slots,
  );
  if (!flat || flat.seconds === 0 || remaining.length === 0) return flat;
  const line = fitLine(samples);
  if (!line || line.t < MIN_T) return flat;
  const seen = samples.map((s) => s.seconds);
  const lo = Math.min(...seen) / 4;
  const hi = Math.max(...seen) * 4;
  const predicted =
    remaining.reduce((s, f) => s + Math.min(hi, Math.max(lo, line.a + line.b * f)), 0) / remaining.length;
  const mean = seen.reduce((a, b) => a + b, 0) / seen.length;
  const centre = flat.seconds * (predicted / mean);
  const r = (predicted > 0 ? line.residualSd / predicted : 0) + 1 / Math.sqrt(samples.length);
  return {
    ...flat,
    seconds: round1(centre),
    lowSeconds: round1(Math.min(flat.lowSeconds, centre / (1 + r))),
    highSeconds: round1(Math.max(flat.highSeconds, centre * (1 + r))),
  };
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
