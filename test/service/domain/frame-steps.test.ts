// Steps of animated integer properties (service/domain/frame-steps.ts): read from the analysis, they
// place the estimate's samples in distinct segments (estimate-samples.ts) and keep the profile from
// drawing a line across a step (frame-profile.ts), for the estimate and the live ETA.
import { describe, expect, it } from 'vitest';
import { leadFrames, refineSampleFrames, spreadFrames } from '../../../service/domain/estimate-samples.js';
import { profileEta, profileSum } from '../../../service/domain/frame-profile.js';
import { MAX_STEP_FRAMES, segmentOf, stepFrames } from '../../../service/domain/frame-steps.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** What analyze_steps.py wrote for bench:estimate's subdivision scene (Blender 3.4, 150 frames, levels 0 to 5). */
const subdivisionAnalysis = [
  {
    fcurves: [
      { data_path: 'location', index: 0 },
      ...['render_levels', 'levels'].map((p) => ({
        data_path: `modifiers["Subdivision"].${p}`,
        index: 0,
        steps: [1, 13, 37, 61, 85, 109].map((frame, value) => ({ frame, value })),
      })),
    ],
  },
];
const frames = range(1, 150);
const steps = stepFrames(subdivisionAnalysis, frames);
/** Each level's geometry 4x the last's, beside a fixed cost: a frame's time is its segment's. */
const truth = (f: number) => 0.05 + 0.02 * 4 ** segmentOf(steps, f);
const measure = (fs: readonly number[]) => fs.map((frame) => ({ frame, seconds: truth(frame) }));

describe('step frames from the analysis', () => {
  it("lists where any integer curve changes within the job's frames, once, sorted", () => {
    expect(steps).toEqual([13, 37, 61, 85, 109]);
    // A job of frames 40-90 sees only the steps after its first frame.
    expect(stepFrames(subdivisionAnalysis, range(40, 90))).toEqual([61, 85]);
    expect(stepFrames(undefined, frames)).toEqual([]);
  });

  it('ignores a property that changes on most frames (a seed): no step function', () => {
    const seed = [
      { fcurves: [{ data_path: 'cycles.seed', steps: range(1, 150).map((frame) => ({ frame, value: frame })) }] },
    ];
    expect(stepFrames(seed, frames)).toEqual([]);
    const few = [
      {
        fcurves: [
          { data_path: 'levels', steps: range(1, MAX_STEP_FRAMES + 1).map((i) => ({ frame: i * 8, value: i })) },
        ],
      },
    ];
    expect(stepFrames(few, frames)).toHaveLength(MAX_STEP_FRAMES);
  });

  it('numbers the segments: how many steps are at or before a frame', () => {
    expect([1, 12, 13, 36, 37, 108, 109, 150].map((f) => segmentOf(steps, f))).toEqual([0, 0, 1, 1, 2, 4, 5, 5]);
  });
});

describe('samples and profile with steps', () => {
  const spread = spreadFrames(frames, steps);
  const sampled = [...leadFrames(frames), ...spread];

  it('places the spread samples in segments the lead and each other leave unsampled', () => {
    const evenly = spreadFrames(frames);
    expect(evenly).toEqual([40, 77, 113, 150]);
    // Evenly spaced, 113 and 150 share the top level and 85-108 has no sample.
    expect(new Set(evenly.map((f) => segmentOf(steps, f))).size).toBe(3);
    expect(spread).toHaveLength(4);
    const segs = sampled.map((f) => segmentOf(steps, f));
    expect(new Set(segs.slice(2)).size).toBe(5);
    expect(segs).toContain(4);
  });

  it('sums the frames left within 3 % where the line across steps missed by more than 10 %', () => {
    const left = frames.filter((f) => !sampled.includes(f));
    const real = sum(left.map(truth));
    const stepped = profileSum(measure(sampled), left, steps)!.value;
    const linear = profileSum(measure([...leadFrames(frames), ...spreadFrames(frames)]), left)!.value;
    expect(Math.abs(stepped / real - 1)).toBeLessThan(0.03);
    expect(Math.abs(linear / real - 1)).toBeGreaterThan(0.1);
  });

  it('refines only a segment without a sample, never across a known step', () => {
    // Samples on both sides of every step: nothing left to search.
    const both = measure([1, 2, 3, 20, 45, 70, 95, 130]);
    expect(refineSampleFrames(frames, both, 3, steps)).toEqual([]);
    // Without steps the same samples get their widest dear gap bisected.
    expect(refineSampleFrames(frames, both, 3).length).toBeGreaterThan(0);
    // A segment (61-84) between two samples has none: its middle is proposed.
    expect(refineSampleFrames(frames, measure([1, 2, 3, 20, 45, 95, 130]), 1, steps)).toEqual([72]);
  });

  it('puts the live ETA at a quarter done within 5 % of the time left, and follows a slower render', () => {
    const done = frames.filter((f) => f <= 38 && !sampled.includes(f));
    const remaining = frames.filter((f) => f > 38 && !sampled.includes(f));
    // The render's frames scatter 5 % either way about what the samples took.
    const seen = done.map((frame, i) => ({ frame, seconds: (i % 2 ? 1.05 : 0.95) * truth(frame) }));
    const real = sum(remaining.map(truth));
    const eta = profileEta(measure(sampled), seen, remaining, remaining.length, 1, 0, steps)!;
    expect(Math.abs(eta.seconds / real - 1)).toBeLessThan(0.05);
    expect(eta.lowSeconds).toBeLessThanOrEqual(real);
    expect(eta.highSeconds).toBeGreaterThanOrEqual(real);
    // A render 14 % slower than its samples throughout (bench:estimate's particles, the machine's load
    // drifting between estimate and render): its first quarter is a few percent of the work, but a
    // quarter of the frames, and moves the ETA within 10 % of the end.
    const slow = done.map((frame) => ({ frame, seconds: 1.14 * truth(frame) }));
    const late = profileEta(measure(sampled), slow, remaining, remaining.length, 1, 0, steps)!;
    expect(Math.abs(late.seconds / (1.14 * real) - 1)).toBeLessThan(0.1);
    expect(late.highSeconds).toBeGreaterThanOrEqual(1.14 * real);
  });
});
