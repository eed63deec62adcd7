// Which frames an estimate renders, in which render calls, and what its lead measures
// (service/domain/estimate-samples.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  leadCosts,
  leadFrames,
  QUARTERS_MIN_FRAMES,
  refineSampleFrames,
  runUpFrame,
  sampleBudget,
  SPREAD_SAMPLES,
  spreadFrames,
  steppedRuns,
  WARM_PAIR_MIN_FRAMES,
} from '../../../service/domain/estimate-samples.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('the lead and the spread samples', () => {
  it("renders a long job's first three frames as the lead, then evenly spaced samples to the end", () => {
    expect(leadFrames(range(1, 150))).toEqual([1, 2, 3]);
    expect(spreadFrames(range(1, 150))).toEqual([40, 77, 113, 150]);
    expect(spreadFrames(range(1, 100))).toEqual([27, 52, 76, 100]);
    // Under 40 frames: the middle and the end (each sample and its run-up are kept: a third of a short job).
    expect(spreadFrames(range(1, 20))).toEqual([12, 20]);
    // A short job: no lead; first (cold, as the render's is), middle and last, no run-ups.
    expect(leadFrames(range(1, 9))).toEqual([]);
    expect(spreadFrames(range(1, 9))).toEqual([1, 5, 9]);
    expect(runUpFrame(range(1, 9), 5, new Set())).toBeNull();
    expect(spreadFrames([7])).toEqual([7]);
    expect(spreadFrames([])).toEqual([]);
    fc.assert(
      fc.property(fc.integer({ min: WARM_PAIR_MIN_FRAMES, max: 5000 }), fc.integer({ min: 1, max: 5 }), (n, step) => {
        const frames = range(0, n - 1).map((i) => 10 + i * step);
        const lead = leadFrames(frames);
        const spread = spreadFrames(frames);
        expect(lead).toEqual(frames.slice(0, 3));
        expect(spread.at(-1)).toBe(frames.at(-1));
        expect(spread.length).toBe(n >= QUARTERS_MIN_FRAMES ? SPREAD_SAMPLES : 2);
        // Each sample has a run-up of its own, outside the lead: the job's frame before it.
        const taken = new Set(lead);
        for (const f of spread) {
          const up = runUpFrame(frames, f, taken);
          expect(up).toBe(frames[frames.indexOf(f) - 1]);
          expect(taken.has(f)).toBe(false);
          taken.add(up!).add(f);
        }
      }),
    );
  });

  it('takes the warm-up from the lead and the call setup from the run-ups', () => {
    // EEVEE on this machine: 7 s, 1.9 s, then 0.1 s warm; each run-up 1.3-1.5 s over its sample.
    const pairs = [
      { runUp: 1.49, sample: 0.13 },
      { runUp: 1.73, sample: 0.38 },
      { runUp: 3.15, sample: 1.66 },
    ];
    const c = leadCosts([7, 1.9, 0.1], pairs)!;
    expect(c.warm).toBe(0.1);
    expect(c.warmupSeconds).toBeCloseTo(8.7, 5);
    expect(c.callSeconds).toBeCloseTo(1.36, 5);
    // Cycles: a jump to a heavy frame costs its run-up more; the median keeps the setup at the light ones'.
    const cycles = [0.01, 0.01, 0.04, 0.24, 0.3].map((d) => ({ runUp: 0.5 + d, sample: 0.5 }));
    expect(leadCosts([0.3, 0.1, 0.1], cycles)!.callSeconds).toBeCloseTo(0.04, 5);
    // Noise never makes a cost negative; a job without a lead has none.
    expect(leadCosts([0.3, 0.1, 0.2], [{ runUp: 0.1, sample: 0.2 }])).toEqual({
      warm: 0.2,
      warmupSeconds: 0,
      callSeconds: 0,
    });
    expect(leadCosts([], pairs)).toBeNull();
  });

  it('groups a list into same-step runs, one render call each', () => {
    expect(steppedRuns([4, 40, 76, 112])).toEqual([{ start: 4, end: 112, step: 36 }]);
    expect(steppedRuns([1, 2, 3])).toEqual([{ start: 1, end: 3, step: 1 }]);
    expect(steppedRuns([5])).toEqual([{ start: 5, end: 5, step: 1 }]);
    expect(steppedRuns([1, 2, 10, 18, 20])).toEqual([
      { start: 1, end: 2, step: 1 },
      { start: 10, end: 18, step: 8 },
      { start: 20, end: 20, step: 1 },
    ]);
    expect(steppedRuns([])).toEqual([]);
  });
});

describe('refinement', () => {
  it('bisects the gap that could move the estimate most, never a frame measured', () => {
    // A subdivision step between 94 and 112: 0.36 s to 1.14 s over 17 frames moves it most.
    const measured = [
      { frame: 3, seconds: 0.06 },
      { frame: 40, seconds: 0.13 },
      { frame: 76, seconds: 0.2 },
      { frame: 94, seconds: 0.36 },
      { frame: 112, seconds: 1.14 },
      { frame: 148, seconds: 1.1 },
    ];
    expect(refineSampleFrames(range(1, 150), measured, 1)).toEqual([103]);
    expect(refineSampleFrames(range(1, 150), measured, 3)).toEqual([103, 85, 21]);
    // Flat: nothing to refine; 3x apart but a tenth of a second over two frames: noise.
    expect(
      refineSampleFrames(
        range(1, 100),
        [1, 50, 100].map((frame) => ({ frame, seconds: 1 })),
        4,
      ),
    ).toEqual([]);
    expect(
      refineSampleFrames(
        range(1, 5),
        [
          { frame: 1, seconds: 0.05 },
          { frame: 3, seconds: 0.05 },
          { frame: 5, seconds: 0.15 },
        ],
        4,
      ),
    ).toEqual([]);
    fc.assert(
      fc.property(
        fc.integer({ min: 12, max: 400 }),
        fc.array(fc.double({ min: 0.01, max: 100, noNaN: true }), { minLength: 5, maxLength: 5 }),
        fc.integer({ min: 0, max: 5 }),
        (n, secs, max) => {
          const frames = range(1, n);
          const picked = [leadFrames(frames).at(-1)!, ...spreadFrames(frames)];
          const measured = picked.map((frame, i) => ({ frame, seconds: secs[i]! }));
          const more = refineSampleFrames(frames, measured, max);
          expect(more.length).toBeLessThanOrEqual(max);
          for (const f of more) {
            expect(frames).toContain(f);
            expect(measured.map((m) => m.frame)).not.toContain(f);
          }
        },
      ),
    );
  });

  it('never renders more than a tenth of a job in all', () => {
    expect(sampleBudget(150)).toBe(15);
    expect(sampleBudget(100)).toBe(10);
    expect(sampleBudget(9)).toBe(0);
  });
});
