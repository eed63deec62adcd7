// The estimate's spread samples in one render call with a frame step behind one run-up, and the
// call setup that run-up measures (service/domain/estimate-samples.ts: spreadCall, firstCalls, runUpPairs).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  firstCalls,
  LEAD_FRAMES,
  QUARTERS_MIN_FRAMES,
  runUpPairs,
  spreadCall,
  spreadFrames,
  SPREAD_SAMPLES,
  steppedRuns,
  WARM_PAIR_MIN_FRAMES,
} from '../../../service/domain/estimate-samples.js';
import { segmentOf } from '../../../service/domain/frame-steps.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('the spread samples in one call', () => {
  it('renders a run-up right after the lead, then samples evenly stepped to the last frame', () => {
    expect(spreadCall(range(1, 100))).toEqual({ runUp: 4, samples: [28, 52, 76, 100] });
    expect(spreadCall(range(1, 150))).toEqual({ runUp: 6, samples: [42, 78, 114, 150] });
    expect(spreadCall(range(1, 40))).toEqual({ runUp: 4, samples: [13, 22, 31, 40] });
    expect(spreadCall(range(1, 20))).toEqual({ runUp: 4, samples: [12, 20] });
    // A short job has no lead: its first, middle and last frames stay alone, as before.
    expect(spreadCall(range(1, 9))).toBeNull();
    expect(firstCalls(range(1, 9)).calls).toEqual([[1], [5], [9]]);
  });

  it('makes the lead and the spread two render calls, whatever the length and step of the job', () => {
    fc.assert(
      fc.property(fc.integer({ min: WARM_PAIR_MIN_FRAMES, max: 5000 }), fc.integer({ min: 1, max: 5 }), (n, step) => {
        const frames = range(0, n - 1).map((i) => 10 + i * step);
        const plan = firstCalls(frames);
        expect(plan.calls.length).toBe(2);
        expect(plan.calls[0]).toEqual(frames.slice(0, LEAD_FRAMES));
        const [runUp, ...samples] = plan.calls[1]!;
        expect(steppedRuns(plan.calls[1]!).length).toBe(1);
        expect(samples.at(-1)).toBe(frames.at(-1));
        expect(samples.length).toBe(n >= QUARTERS_MIN_FRAMES ? SPREAD_SAMPLES : 2);
        // The run-up follows the lead closely: its warm time is the lead's third frame's, near enough.
        const at = frames.indexOf(runUp!);
        expect(at).toBeGreaterThanOrEqual(LEAD_FRAMES);
        expect(at).toBeLessThan(LEAD_FRAMES + samples.length);
        // Never more frames than the separate calls rendered: each sample and its run-up.
        expect(samples.length + 1).toBeLessThanOrEqual(2 * spreadFrames(frames).length);
        expect(plan.samples).toEqual([...samples, frames[LEAD_FRAMES - 1]]);
        expect(plan.runUps).toEqual([[runUp, null]]);
      }),
    );
  });

  it("samples every segment the separate calls would between an animated property's steps", () => {
    // bench:estimate's EEVEE scene: Subdivision levels step at 15, 41 and 67 of 100 frames.
    const steps = [15, 41, 67];
    const call = spreadCall(range(1, 100), steps)!;
    expect(call).toEqual({ runUp: 4, samples: [28, 52, 76, 100] });
    const held = new Set(call.samples.map((f) => segmentOf(steps, f)));
    for (const f of spreadFrames(range(1, 100), steps)) expect(held.has(segmentOf(steps, f))).toBe(true);
    // A short segment the even step misses: a smaller step reaches it, within the separate calls' frames.
    const tight = spreadCall(range(1, 96), [20, 27, 66, 88])!;
    expect(tight).toEqual({ runUp: 6, samples: [24, 42, 60, 78, 96] });
    // None fits without rendering more frames than the separate calls: each sample behind its run-up, as before.
    expect(spreadCall(range(1, 100), [30, 40])).toBeNull();
    expect(firstCalls(range(1, 100), [30, 40])).toEqual({
      calls: [
        [1, 2, 3],
        [33, 34],
        [51, 52],
      ],
      samples: [34, 52, 3],
      runUps: [
        [33, 34],
        [51, 52],
      ],
    });
  });

  it('puts a run-up before each sample across steps where calls are cheap (Cycles)', () => {
    // bench:estimate's subdivision: a stepped call enters each level straight from the one before,
    // and that first frame pays the change; behind its own run-up each sample is steady.
    const steps = [31, 61, 85, 109];
    const cheap = firstCalls(range(1, 150), steps, false);
    expect(cheap.calls.length).toBeGreaterThan(2);
    expect(cheap.calls.slice(1).every((c) => c.length === 2 && c[1]! - c[0]! === 1)).toBe(true);
    expect(cheap.runUps.every(([up, s]) => s === up + 1)).toBe(true);
    // Every segment the spread wants still has its sample.
    const held = new Set(cheap.calls.slice(1).map((c) => segmentOf(steps, c[1]!)));
    for (const f of spreadFrames(range(1, 150), steps)) expect(held.has(segmentOf(steps, f))).toBe(true);
    // Dear calls (EEVEE) keep the one stepped call; without steps a cheap call steps too (nothing to enter).
    expect(firstCalls(range(1, 150), steps, true).calls.length).toBe(2);
    expect(firstCalls(range(1, 150), [], false).calls.length).toBe(2);
  });

  it("measures the call's setup as the run-up's excess over the warm frames around it", () => {
    const plan = firstCalls(range(1, 100));
    const seconds = new Map([
      [1, 7],
      [2, 1.9],
      [3, 0.1],
      [4, 0.95],
      [28, 0.35],
      [52, 0.5],
      [76, 0.6],
      [100, 0.6],
    ]);
    const pairs = runUpPairs(plan, (f) => seconds.get(f)!);
    // Frame 4 warm: the line from frame 3 (0.1 s) to frame 28 (0.35 s), a tenth of a second.
    expect(pairs).toEqual([{ runUp: 0.95, sample: expect.closeTo(0.11, 5) as number }]);
    // Separate calls: each run-up beside the sample after it.
    const apart = firstCalls(range(1, 100), [30, 40]);
    expect(runUpPairs(apart, (f) => f / 100)).toEqual([
      { runUp: 0.33, sample: 0.34 },
      { runUp: 0.51, sample: 0.52 },
    ]);
  });
});
