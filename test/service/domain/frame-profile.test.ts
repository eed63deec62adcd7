// Frame time along the timeline from an estimate's samples (service/domain/frame-profile.ts): the
// estimate's wall time follows a heavy region between the samples and a growth a straight line
// misses, counts the scene load and the warm-up once per slot, and the live ETA takes the
// estimate's profile scaled by the render's own frames.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { estimateFigures, type EstimateInput } from '../../../service/domain/estimate-figures.js';
import { estimateProfile } from '../../../service/domain/estimate-state.js';
import { lessCallSetup, profileAt, profileEta, profileSum, warmRows } from '../../../service/domain/frame-profile.js';
import { trendEta } from '../../../service/domain/frame-trend.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const sample = (frame: number, seconds: number) => ({ frame, seconds, peakMemoryBytes: null, device: 'CPU' });

/** A flythrough: 0.2 s in an empty sky, 2 s in the heavy cluster around frame 60, 0.4 s past it. */
const flythrough = (f: number) => (f < 40 ? 0.2 : f <= 80 ? 0.2 + 1.8 * Math.sin(((f - 40) / 40) * Math.PI) : 0.4);
/** Subdivision keyframed 0 to 5 over 120 frames: each level's geometry 4x the last's, beside a fixed cost. */
const subdivision = (f: number) => 0.05 + 0.02 * 4 ** Math.round(((f - 1) / 119) * 5);

function input(over: Partial<EstimateInput>): EstimateInput {
  return {
    frames: range(1, 120),
    samples: [],
    loadSeconds: [2],
    outputBytes: [1000],
    slots: [{ kind: 'cpu', memoryBytes: null, free: true }],
    queueAheadSeconds: 0,
    rates: { CPU: 1 },
    ...over,
  };
}

describe('the profile through the samples', () => {
  it('interpolates between samples and holds the ends beyond them', () => {
    const s = [
      { frame: 10, seconds: 1 },
      { frame: 20, seconds: 3 },
    ];
    expect(profileAt(s, 15)).toEqual({ value: 2, low: 1, high: 3 });
    expect(profileAt(s, 1).value).toBe(1);
    expect(profileAt(s, 99).value).toBe(3);
    expect(profileSum(s, [10, 15, 20])).toEqual({ value: 6, low: 5, high: 7 });
    expect(profileSum([], [1])).toBeNull();
  });

  it('keeps the value between the envelope of its neighbours', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 500 }), { minLength: 1, maxLength: 10 }),
        fc.array(fc.double({ min: 0, max: 100, noNaN: true }), { minLength: 10, maxLength: 10 }),
        fc.integer({ min: -10, max: 600 }),
        (frames, secs, at) => {
          const s = frames.map((frame, i) => ({ frame, seconds: secs[i]! }));
          const sorted = [...s].sort((a, b) => a.frame - b.frame);
          const p = profileAt(sorted, at);
          expect(p.low).toBeLessThanOrEqual(p.value + 1e-9);
          expect(p.value).toBeLessThanOrEqual(p.high + 1e-9);
        },
      ),
    );
  });
});

describe('estimate wall time from the profile', () => {
  it("finds a flythrough's heavy middle from the quarters, where first, middle and last alone are alike", () => {
    const frames = range(1, 120);
    const samples = [2, 30, 60, 90, 120].map((f) => sample(f, flythrough(f)));
    const f = estimateFigures(input({ frames, samples, kept: [1, ...samples.map((s) => s.frame)] }))!;
    const truth = 2 + sum(frames.filter((x) => ![1, 2, 30, 60, 90, 120].includes(x)).map(flythrough));
    expect(Math.abs(f.wallSeconds.value / truth - 1)).toBeLessThan(0.25);
    expect(f.wallSeconds.low).toBeLessThanOrEqual(truth);
    expect(f.wallSeconds.high).toBeGreaterThanOrEqual(truth);
  });

  it('follows subdivision growing 4x a level once refinement added samples where neighbours differ', () => {
    const frames = range(1, 120);
    const samples = [2, 30, 60, 90, 105, 113, 120].map((f) => sample(f, subdivision(f)));
    const kept = [1, ...samples.map((s) => s.frame)];
    const f = estimateFigures(input({ frames, samples, kept, loadSeconds: [0] }))!;
    const truth = sum(frames.filter((x) => !kept.includes(x)).map(subdivision));
    expect(Math.abs(f.renderSeconds.value / truth - 1)).toBeLessThan(0.25);
    expect(f.renderSeconds.low).toBeLessThanOrEqual(truth);
    expect(f.renderSeconds.high).toBeGreaterThanOrEqual(truth);
  });

  it("counts the load, the first frame's warm-up and the farm's fixed time once, frames over the free slots", () => {
    const samples = [2, 60, 120].map((f) => sample(f, 1));
    const slots = [1, 2].map(() => ({ kind: 'cpu' as const, memoryBytes: null, free: true }));
    const f = estimateFigures(
      input({ samples, kept: [1, 2, 60, 120], slots, warmupSeconds: [3], overheadSeconds: 1.5, loadSeconds: [2] }),
    )!;
    expect(f.framesToRender).toBe(116);
    expect(f.renderSeconds.value).toBeCloseTo(116, 1);
    expect(f.wallSeconds.value).toBeCloseTo(2 + 3 + 1.5 + 58, 1);
    // Nothing left to render: no load, no warm-up.
    const none = estimateFigures(input({ frames: [1, 2], samples: [sample(1, 1), sample(2, 1)] }))!;
    expect(none.wallSeconds.value).toBe(0);
  });
});

describe('the live ETA from the profile', () => {
  it("predicts subdivision's growth at a quarter done, where a line through the first quarter cannot", () => {
    const frames = range(1, 120);
    const profile = [2, 30, 60, 90, 105, 113, 120].map((f) => ({ frame: f, seconds: subdivision(f) }));
    const kept = [1, ...profile.map((p) => p.frame)];
    const own = frames.filter((f) => !kept.includes(f));
    const done = own.slice(0, 30).map((frame) => ({ frame, seconds: subdivision(frame) }));
    const remaining = own.slice(30);
    const truth = sum(remaining.map(subdivision));
    const eta = profileEta(profile, done, remaining, remaining.length, 1)!;
    expect(Math.abs(eta.seconds / truth - 1)).toBeLessThan(0.1);
    expect(eta.lowSeconds).toBeLessThanOrEqual(truth);
    expect(eta.highSeconds).toBeGreaterThanOrEqual(truth);
    const line = trendEta(done, remaining, remaining.length, 1)!;
    expect(Math.abs(line.seconds / truth - 1)).toBeGreaterThan(0.3);
    // A render 1.3x slower than the samples (another worker, another load): its first quarter, a few
    // percent of the work, moves the ETA part of the way, more as it shows more; the band holds the end.
    const after = (n: number, factor: number) =>
      profileEta(
        profile,
        own.slice(0, n).map((frame) => ({ frame, seconds: subdivision(frame) * factor })),
        own.slice(n),
        own.length - n,
        1,
      )!;
    const moved = (n: number) => after(n, 1.3).seconds / after(n, 1).seconds;
    expect(moved(30)).toBeGreaterThan(1);
    expect(moved(90)).toBeGreaterThan(moved(30));
    expect(moved(90)).toBeLessThanOrEqual(1.3);
    expect(after(30, 1.3).highSeconds).toBeGreaterThanOrEqual(sum(own.slice(30).map(subdivision)) * 1.3);
  });

  it('is zero with nothing left, null without a profile, and divides the frames among the slots', () => {
    const profile = [
      { frame: 1, seconds: 1 },
      { frame: 10, seconds: 1 },
    ];
    expect(profileEta(profile, [], [], 0, 2)!.seconds).toBe(0);
    expect(profileEta([], [], [5], 1, 1)).toBeNull();
    expect(profileEta(profile, [], range(2, 9), 8, 2)!.seconds).toBeCloseTo(4, 1);
  });

  it("scales the profile by each slot's warm frames, not the first one that paid the warm-up", () => {
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const rows = [
      { frame: 3, slot: 'a', finishedAt: at(5), seconds: 6 },
      { frame: 4, slot: 'b', finishedAt: at(6), seconds: 6 },
      ...range(5, 12).map((frame) => ({ frame, slot: frame % 2 ? 'a' : 'b', finishedAt: at(frame + 2), seconds: 1 })),
    ];
    expect(warmRows(rows).map((r) => r.frame)).toEqual(range(5, 12));
    expect(warmRows(rows.slice(0, 4))).toHaveLength(4);
    const profile = [
      { frame: 2, seconds: 1 },
      { frame: 100, seconds: 1 },
    ];
    const eta = profileEta(profile, warmRows(rows), range(13, 100), 88, 2)!;
    expect(eta.seconds).toBeCloseTo(44, 0);
  });

  it("takes a call's setup off a frame that does not follow the slot's last: the pace counts it once", () => {
    // Previews first, as bench:estimate's EEVEE job rendered: 50 and 100 alone (each its own call), then
    // 4-11 in one call after frames 1-3 an estimate kept. Warm frames: 0.06 s up to 60, then 1 s.
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const warm = (f: number) => (f <= 60 ? 0.06 : 1);
    const setup = 0.9;
    const order = [50, 100, ...range(4, 11)];
    const starts = new Set([50, 100, 4]);
    const rows = order.map((frame, i) => ({
      frame,
      slot: 'a',
      finishedAt: at(i),
      renderSeconds: warm(frame) + (starts.has(frame) ? setup : 0),
    }));
    const trimmed = lessCallSetup(rows, range(1, 100), setup);
    // The slot's first row stays whole (warmRows leaves it out); the lone 100 and the run's first, 4,
    // lose the setup.
    expect(trimmed.map((r) => Math.round(r.renderSeconds * 100) / 100)).toEqual(
      order.map((f) => (f === 50 ? 0.96 : warm(f))),
    );
    expect(lessCallSetup(rows, range(1, 100), undefined)).toEqual(rows);
    const profile = [3, 27, 52, 76].map((frame) => ({ frame, seconds: warm(frame) }));
    const remaining = range(12, 99).filter((f) => ![27, 50, 52, 76].includes(f));
    const truth = sum(remaining.map(warm)) + 9 * setup;
    const seen = (r: typeof rows) => warmRows(r).map((x) => ({ frame: x.frame, seconds: x.renderSeconds }));
    const with_ = profileEta(profile, seen(trimmed), remaining, remaining.length, 1, setup)!;
    const without = profileEta(profile, seen(rows), remaining, remaining.length, 1, setup)!;
    expect(Math.abs(with_.seconds / truth - 1)).toBeLessThan(Math.abs(without.seconds / truth - 1));
    expect(Math.abs(with_.seconds / truth - 1)).toBeLessThan(0.1);
  });

  it("counts the setup each render call still to start pays, and the render's pace by the work it showed", () => {
    // EEVEE here: warm frames 0.1 s growing to 1.6 s, each render call of 8 frames 1.4 s dearer in its first.
    const warm = (f: number) => (f < 64 ? 0.1 : 1.6);
    const took = (f: number) => warm(f) + ((f - 3) % 8 === 0 ? 1.4 : 0);
    const profile = [3, 28, 52, 76, 100].map((frame) => ({ frame, seconds: warm(frame) }));
    const done = range(5, 27).map((frame) => ({ frame, seconds: took(frame) }));
    const remaining = range(29, 100).filter((f) => !profile.some((p) => p.frame === f));
    const truth = sum(remaining.map(took));
    const eta = profileEta(profile, done, remaining, remaining.length, 1, 1.4)!;
    expect(Math.abs(eta.seconds / truth - 1)).toBeLessThan(0.1);
    expect(eta.lowSeconds).toBeLessThanOrEqual(truth);
    expect(eta.highSeconds).toBeGreaterThanOrEqual(truth);
    // Its first quarter 20 % faster than the samples (frames of 0.1 s: EEVEE's on bench:estimate), a
    // twentieth of the work: the dear frames ahead still count nearly as sampled.
    const quick = done.map((d) => ({ ...d, seconds: d.seconds * 0.8 }));
    expect(Math.abs(profileEta(profile, quick, remaining, remaining.length, 1, 1.4)!.seconds / truth - 1)).toBeLessThan(
      0.1,
    );
  });

  it("adds each render call's setup to the estimate, beyond each slot's first call", () => {
    const samples = [3, 60, 120].map((f) => sample(f, 0.5));
    const kept = [1, 2, 3, 4, 60, 120];
    const base = estimateFigures(input({ samples, kept, loadSeconds: [0] }))!;
    const withSetup = estimateFigures(input({ samples, kept, loadSeconds: [0], callSeconds: [1.4] }))!;
    // 114 frames (5-59, 61-119) in the planner's chunks of 8 on the one slot: 15 calls, 14 beyond the first.
    expect(withSetup.renderSeconds.value - base.renderSeconds.value).toBeCloseTo(14 * 1.4, 1);
    expect(withSetup.wallSeconds.value - base.wallSeconds.value).toBeCloseTo(14 * 1.4, 1);
  });

  it("takes the estimate's samples only for the request it sampled", () => {
    const est = {
      requestedConfig: { frameRanges: ['1-9'] },
      state: 'ready' as const,
      startedAt: '2026-01-01T00:00:00Z',
      frames: [1, 5, 9],
      samples: [1, 5, 9].map((f) => sample(f, 2)),
    };
    expect(estimateProfile(est, { frameRanges: ['1-9'] })).toEqual({
      kept: [1, 5, 9],
      profile: [1, 5, 9].map((frame) => ({ frame, seconds: 2 })),
    });
    expect(estimateProfile(est, { frameRanges: ['1-20'] })).toEqual({ kept: [] });
    expect(estimateProfile(undefined, {})).toBeUndefined();
  });
});
