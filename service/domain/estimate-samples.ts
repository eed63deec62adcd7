// Which frames an estimate renders (extension estimate), all in one warm Blender run, in render
// calls that pay what the render's pay. Measured on bench:estimate (2 shared cores):
//   - a fresh Blender's first frames pay a warm-up: EEVEE's first took 7 s and its second 1.9 s where
//     its third took 0.1 s, as the render's own first three frames did (6.2, 2.1, 0.08 s);
//   - every render call pays a setup inside its first frame: EEVEE's render calls (its chunks of 8
//     frames) each began with a frame 1.3-1.7 s dearer than the next; Cycles' about 0.01-0.05 s;
//   - a frame after a jump along the timeline pays what the render's consecutive frames pay once:
//     a Suzanne at subdivision level 5 took 1.2-1.5 s right after a jump, 0.9-1.0 s in sequence.
// So a long job's estimate renders its first three frames as one call (the lead: the third is the
// first warm sample, the excess of the first two over it the warm-up each render slot pays once),
// then its spread samples as one call with a frame step behind one run-up (spreadCall): the run-up
// pays the call's setup and the jump, the samples after it are warm as the render's frames are
// (Blender only evaluates the frames it steps over), and the run-up's excess over the warm frames
// around it is the setup each of the render's calls pays. Each sample behind its own run-up in a
// call of its own (the only way before 2026-12-06, still where no step fits) paid EEVEE's setup,
// about 0.85 s, once a sample: a 100-frame EEVEE job's estimate cost 17 % of its render. The
// samples are evenly spaced to the end, then, while the estimate's cost allows, one at a time where
// neighbouring samples differ most (a step in the timeline: a subdivision level, a heavy region).
// Where the analysis names the frames at which an animated integer property steps (frame-steps.ts),
// the spread samples go to distinct segments between steps and refinement never bisects across a
// known step: the profile holds each segment flat from its own samples, so one sample a segment is
// worth more than two on one. Pure.
import { profileValue } from './frame-profile.js';
import { segmentOf } from './frame-steps.js';

/** Jobs of at least this many frames render the lead (their first three frames) before the samples. */
export const WARM_PAIR_MIN_FRAMES = 12;

/** Frames of the lead: the first pays the process's warm-up, the second the rest of it (EEVEE), the third is warm. */
export const LEAD_FRAMES = 3;

/** Evenly spaced samples after the lead, so a heavy region between start, middle and end shows (the quarters). */
export const SPREAD_SAMPLES = 4;

/** Jobs shorter than this sample only the middle and the end after the lead: each sample and run-up is kept. */
export const QUARTERS_MIN_FRAMES = 40;

/** The lead frames (rendered first, cold), on a long enough job; none on a short one. */
export function leadFrames(frames: readonly number[]): number[] {
  return frames.length >= WARM_PAIR_MIN_FRAMES ? frames.slice(0, LEAD_FRAMES) : [];
}

/**
 * The spread samples, in the order rendered: SPREAD_SAMPLES frames evenly spaced by index after
 * the lead up to the last (each rendered behind its run-up: runUpFrame). On a short job (no lead):
 * first, middle and last, alone. With `steps`, a sample whose segment the lead or an earlier sample
 * already holds moves to the middle of the nearest segment none holds, while one is left.
 */
export function spreadFrames(frames: readonly number[], steps: readonly number[] = []): number[] {
  if (frames.length === 0) return [];
  const n = frames.length - 1;
  if (frames.length < WARM_PAIR_MIN_FRAMES) return [...new Set([0, Math.floor(n / 2), n].map((i) => frames[i]!))];
  const from = LEAD_FRAMES - 1;
  const count = frames.length >= QUARTERS_MIN_FRAMES ? SPREAD_SAMPLES : 2;
  const idx = Array.from({ length: count }, (_, j) => from + Math.round(((j + 1) * (n - from)) / count));
  const even = [...new Set(idx)];
  if (!steps.length) return even.map((i) => frames[i]!);
  // Index ranges of the segments after the lead, and which the lead holds.
  const seg = (i: number) => segmentOf(steps, frames[i]!);
  const ranges = new Map<number, [number, number]>();
  for (let i = from + 1; i <= n; i++) ranges.set(seg(i), [ranges.get(seg(i))?.[0] ?? i, i]);
  const held = new Set(frames.slice(0, LEAD_FRAMES).map((f) => segmentOf(steps, f)));
  const kept = even.filter((i) => !held.has(seg(i)) && (held.add(seg(i)), true));
  const moved = even.filter((i) => !kept.includes(i));
  for (const i of moved) {
    const free = [...ranges.keys()]
      .filter((k) => !held.has(k))
      .sort((a, b) => Math.abs(a - seg(i)) - Math.abs(b - seg(i)));
    if (free.length === 0) break;
    const [a, b] = ranges.get(free[0]!)!;
    held.add(free[0]!);
    kept.push(Math.floor((a + b) / 2));
  }
  return [...new Set(kept)].sort((a, b) => a - b).map((i) => frames[i]!);
}

/** The spread call: its run-up (pays the call's setup and the jump from the lead), then its samples, every `step`. */
export interface SpreadCall {
  runUp: number;
  samples: number[];
}

/**
 * The spread samples of a job with a lead as ONE render call with a frame step (EEVEE's call setup
 * cost 0.85 s a call on bench:estimate): a run-up at most `step` frames after the lead, then samples
 * every `step` frames to the last. The step is the even spread's (SPREAD_SAMPLES samples; 2 under
 * QUARTERS_MIN_FRAMES), made smaller where the analysis's steps need it: the call samples every
 * segment spreadFrames would, within the frames the separate calls would render (each sample and its
 * run-up). Within one call Blender only evaluates the frames it steps over (a frame change), it does
 * not render them. Null on a job without a lead, on frames not evenly numbered along the call, or where
 * no step fits: the samples are then rendered each behind its run-up (runUpFrame), as before.
 */
export function spreadCall(frames: readonly number[], steps: readonly number[] = []): SpreadCall | null {
  if (frames.length < WARM_PAIR_MIN_FRAMES) return null;
  const n = frames.length - 1;
  const span = n - LEAD_FRAMES; // frames after the lead's last, less the run-up
  const count = frames.length >= QUARTERS_MIN_FRAMES ? SPREAD_SAMPLES : 2;
  const spread = spreadFrames(frames, steps);
  const want = new Set(spread.map((f) => segmentOf(steps, f)));
  for (let k = Math.floor(span / count); k >= 1; k--) {
    const m = Math.floor(span / k);
    // No more frames than the separate calls: each sample and its run-up.
    if (m + 1 > 2 * spread.length) break;
    const idx = Array.from({ length: m + 1 }, (_, j) => n - (m - j) * k);
    const call = idx.map((i) => frames[i]!);
    const step = call[1]! - call[0]!;
    if (step <= 0 || call.some((f, j) => j > 0 && f - call[j - 1]! !== step)) continue;
    const held = new Set(call.slice(1).map((f) => segmentOf(steps, f)));
    if ([...want].every((s) => held.has(s))) return { runUp: call[0]!, samples: call.slice(1) };
  }
  return null;
}

/** The estimate's first render calls, what each sample is and which run-up measures a call's setup. */
export interface FirstCalls {
  /** The lead, then the spread: one stepped call (spreadCall), or each sample behind its run-up. */
  calls: number[][];
  /** The warm samples among them, in the order reported: the spread's, then the lead's third frame. */
  samples: number[];
  /** Each run-up and the sample its excess is over: the one after it in its call, or null for the stepped call's. */
  runUps: [number, number | null][];
}

/**
 * The lead and the spread as render calls: spreadCall where one fits and is worth it. Across an
 * animated property's steps the stepped call enters each segment straight from another, and that
 * first frame pays the change (bench:estimate's subdivision: 0.88 s at the top level where the
 * render's steady frames took 0.66, the render's own first frame there 0.88 too), so the segment's
 * one sample read high (+13 % on the wall, +23 % on the live ETA). Behind its own run-up a sample
 * is steady, for one call setup each: a few hundredths of a second on Cycles, about 1 s on the
 * rasterizers (`dearCalls`: EEVEE, Workbench), where the setups cost more than the change misleads.
 */
export function firstCalls(frames: readonly number[], steps: readonly number[] = [], dearCalls = true): FirstCalls {
  const lead = leadFrames(frames);
  const warm = lead.slice(LEAD_FRAMES - 1);
  const stepped = steps.length && !dearCalls ? null : spreadCall(frames, steps);
  if (stepped) {
    const calls = [lead, [stepped.runUp, ...stepped.samples]].filter((c) => c.length > 0);
    return { calls, samples: [...stepped.samples, ...warm], runUps: [[stepped.runUp, null]] };
  }
  const taken = new Set(lead);
  const spread = spreadFrames(frames, steps).map((f) => {
    const up = runUpFrame(frames, f, taken);
    return up !== null ? [up, f] : [f];
  });
  return {
    calls: [lead, ...spread].filter((c) => c.length > 0),
    samples: [...spread.map((c) => c.at(-1)!), ...warm],
    runUps: spread.filter((c) => c.length === 2).map((c) => [c[0]!, c[1]!]),
  };
}

/**
 * The run-ups' times beside what the frame would take warm in the same call (leadCosts' pairs): the
 * sample after it, or for the stepped call's run-up (a few frames after the lead's warm third) the
 * profile of the warm samples at its frame.
 */
export function runUpPairs(
  plan: FirstCalls,
  seconds: (frame: number) => number,
  steps: readonly number[] = [],
): { runUp: number; sample: number }[] {
  const warm = plan.samples.map((f) => ({ frame: f, seconds: seconds(f) }));
  return plan.runUps.map(([up, s]) => ({
    runUp: seconds(up),
    sample: s !== null ? seconds(s) : (profileValue(warm, up, steps) ?? seconds(up)),
  }));
}

/**
 * The frame rendered just before `sample` in the same call, on a job long enough to have a lead:
 * the job's previous frame, unless taken. Null without one.
 */
export function runUpFrame(frames: readonly number[], sample: number, taken: ReadonlySet<number>): number | null {
  if (frames.length < WARM_PAIR_MIN_FRAMES) return null;
  const i = frames.indexOf(sample);
  const p = i > 0 ? frames[i - 1]! : undefined;
  return p === undefined || taken.has(p) ? null : p;
}

/**
 * Of the full render's work (the profile summed over every frame, with its setups), the share the
 * estimate spends at most on its own Blender seconds before it stops refining: its load and lead
 * come first, so a scene whose cold start is dear (EEVEE) refines nothing.
 */
export const REFINE_SHARE = 0.08;

/** Frames an estimate of a job of `frames` frames renders at most (10 %: the refinement never goes beyond). */
export function sampleBudget(frames: number): number {
  return Math.floor(frames * 0.1);
}

/** Two neighbouring samples whose times differ by more than this factor may get a frame between them. */
export const REFINE_RATIO = 1.25;

/**
 * ...and only where the gap can move the estimate by more than this many seconds (the difference
 * times the frames between): below it a difference is noise beside the scene load.
 */
export const REFINE_MIN_SECONDS = 0.5;

export interface MeasuredFrame {
  frame: number;
  seconds: number;
}

/**
 * The refinement: for each pair of neighbouring measured frames whose times differ by more than
 * REFINE_RATIO and whose gap could move the estimate by more than REFINE_MIN_SECONDS, the job's
 * frame half way between them (when one lies strictly between), the gaps that could move it most
 * first (the difference times the frames between: a step of unknown place in a long gap), `max`
 * at most. Nothing already measured comes back. With `steps`, two samples in different segments are
 * bisected only when a segment between them has no sample (its middle is proposed): a known step
 * needs no search.
 */
export function refineSampleFrames(
  frames: readonly number[],
  measured: readonly MeasuredFrame[],
  max: number,
  steps: readonly number[] = [],
): number[] {
  if (max <= 0 || measured.length < 2) return [];
  const position = new Map(frames.map((f, i) => [f, i] as const));
  const done = new Set(measured.map((m) => m.frame));
  const sorted = measured
    .filter((m) => position.has(m.frame))
    .sort((a, b) => position.get(a.frame)! - position.get(b.frame)!);
  const gaps: { moves: number; frame: number }[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!;
    const b = sorted[i]!;
    const lo = Math.max(Math.min(a.seconds, b.seconds), 1e-6);
    const ratio = Math.max(a.seconds, b.seconds) / lo;
    const ia = position.get(a.frame)!;
    const ib = position.get(b.frame)!;
    const moves = Math.abs(a.seconds - b.seconds) * (ib - ia - 1);
    if (ratio <= REFINE_RATIO || moves <= REFINE_MIN_SECONDS || ib - ia < 2) continue;
    const mid = steps.length ? segmentMiddle(frames, steps, ia, ib) : frames[Math.floor((ia + ib) / 2)]!;
    if (mid === null) continue;
    if (!done.has(mid)) gaps.push({ moves, frame: mid });
  }
  return [...new Set(gaps.sort((x, y) => y.moves - x.moves).map((g) => g.frame))].slice(0, max);
}

/**
 * The frame to bisect between the samples at indices ia and ib given the steps: their middle within
 * one segment; across segments the middle of the longest segment strictly between them (none: null,
 * the two sides of a known step are each measured).
 */
function segmentMiddle(frames: readonly number[], steps: readonly number[], ia: number, ib: number): number | null {
  const sa = segmentOf(steps, frames[ia]!);
  const sb = segmentOf(steps, frames[ib]!);
  if (sa === sb) return frames[Math.floor((ia + ib) / 2)]!;
  const ranges = new Map<number, [number, number]>();
  for (let i = ia + 1; i < ib; i++) {
    const k = segmentOf(steps, frames[i]!);
    if (k !== sa && k !== sb) ranges.set(k, [ranges.get(k)?.[0] ?? i, i]);
  }
  const longest = [...ranges.values()].sort((x, y) => y[1] - y[0] - (x[1] - x[0]))[0];
  return longest ? frames[Math.floor((longest[0] + longest[1]) / 2)]! : null;
}

/**
 * What the lead and the run-ups say: the warm-up a fresh Blender's first frames pay beyond warm ones
 * (the lead's first two over twice its third) and the setup each render call pays in its first
 * frame (the median of each run-up's excess over its sample; a run-up also pays the jump, which the
 * median keeps from one heavy frame's). Null where a job had no lead.
 */
export function leadCosts(
  lead: readonly number[],
  pairs: readonly { runUp: number; sample: number }[],
): { warm: number; warmupSeconds: number; callSeconds: number } | null {
  if (lead.length < LEAD_FRAMES) return null;
  const warm = lead[LEAD_FRAMES - 1]!;
  const excess = pairs.map((p) => Math.max(0, p.runUp - p.sample)).sort((a, b) => a - b);
  const mid = excess.length ? (excess[(excess.length - 1) >> 1]! + excess[excess.length >> 1]!) / 2 : 0;
  return { warm, warmupSeconds: Math.max(0, lead[0]! + lead[1]! - 2 * warm), callSeconds: mid };
}

/** The list as same-step runs, in order: each is one render call (a lone frame is a run of one). */
export function steppedRuns(list: readonly number[]): { start: number; end: number; step: number }[] {
  const runs: { start: number; end: number; step: number }[] = [];
  for (const f of list) {
    const last = runs.at(-1);
    const step = last ? f - last.end : 0;
    if (last && step > 0 && (last.start === last.end || step === last.step)) {
      last.step = step;
      last.end = f;
    } else runs.push({ start: f, end: f, step: 1 });
  }
  return runs;
}
