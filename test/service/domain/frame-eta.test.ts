// The live ETA and the frame summary (service/domain/frame-eta.ts): what a user reads while a job
// renders. Examples pin the numbers; properties pin what must hold for any frame times.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { activeSlots, etaBand, quantile, summarizeFrames } from '../../../service/domain/frame-eta.js';

const times = fc.array(fc.double({ min: 0.01, max: 10_000, noNaN: true }), { minLength: 1, maxLength: 200 });

describe('etaBand', () => {
  it('divides the frames left among the slots at the mean time per frame', () => {
    // 10 frames at 2 s each on 2 slots: 10 s; equal times leave only the few-samples widening.
    const eta = etaBand([2, 2, 2, 2], 10, 2)!;
    expect(eta.seconds).toBe(10);
    expect(eta.lowSeconds).toBeCloseTo(10 / 1.5, 1);
    expect(eta.highSeconds).toBe(15);
    expect(eta).toMatchObject({ samples: 4, slots: 2 });
  });

  it(
    'is unknown before the first frame, zero when nothing is left, and never spreads frames over more slots ' +
      'than frames',
    () => {
      expect(etaBand([], 10, 4)).toBeNull();
      expect(etaBand([3, 4], 0, 4)).toEqual({ seconds: 0, lowSeconds: 0, highSeconds: 0, samples: 2, slots: 1 });
      expect(etaBand([3], 2, 8)!.slots).toBe(2);
    },
  );

  it("counts a frame in flight by what is left of it, and fewer frames than slots as one frame's time", () => {
    // 2.5 frames left at 4 s on 2 slots: 5 s; 1.5 frames left on 4 slots: one frame, 4 s.
    expect(etaBand([4, 4], 2.5, 2)).toMatchObject({ seconds: 5, slots: 2 });
    expect(etaBand([4, 4], 1.5, 4)).toMatchObject({ seconds: 4, slots: 2 });
    expect(etaBand([4, 4], 0.5, 4)).toMatchObject({ seconds: 2, slots: 1 });
  });

  it('never grows as frames finish, for any share of a frame', () => {
    fc.assert(
      fc.property(
        times,
        fc.double({ min: 0, max: 1000, noNaN: true }),
        fc.double({ min: 0, max: 1000, noNaN: true }),
        fc.integer({ min: 1, max: 64 }),
        (s, a, b, slots) => {
          const [less, more] = a <= b ? [a, b] : [b, a];
          expect(etaBand(s, less, slots)!.seconds).toBeLessThanOrEqual(etaBand(s, more, slots)!.seconds);
        },
      ),
    );
  });

  it('widens when frame times vary along the timeline', () => {
    const steady = etaBand([10, 10, 10, 10, 10, 10, 10, 10], 100, 4)!;
    const varied = etaBand([2, 18, 4, 16, 6, 14, 8, 12], 100, 4)!;
    expect(varied.seconds).toBe(steady.seconds);
    expect(varied.highSeconds - varied.lowSeconds).toBeGreaterThan(steady.highSeconds - steady.lowSeconds);
  });

  it('holds the centre inside its band, never below zero', () => {
    fc.assert(
      fc.property(times, fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 1, max: 256 }), (s, left, slots) => {
        const eta = etaBand(s, left, slots)!;
        expect(eta.lowSeconds).toBeGreaterThanOrEqual(0);
        expect(eta.lowSeconds).toBeLessThanOrEqual(eta.seconds);
        expect(eta.seconds).toBeLessThanOrEqual(eta.highSeconds);
        expect(eta.samples).toBe(s.length);
      }),
    );
  });

  it('narrows as more frames of the same times finish, and more slots finish sooner', () => {
    fc.assert(
      fc.property(times, fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 64 }), (s, left, slots) => {
        const once = etaBand(s, left, slots)!;
        const twice = etaBand([...s, ...s], left, slots)!;
        // Same distribution, more samples: a band no wider (relative to its centre).
        expect(twice.highSeconds / Math.max(twice.seconds, 1e-9)).toBeLessThanOrEqual(
          once.highSeconds / Math.max(once.seconds, 1e-9) + 1e-6 + 0.1 / Math.max(once.seconds, 1e-9),
        );
        expect(etaBand(s, left, slots + 1)!.seconds).toBeLessThanOrEqual(once.seconds);
        expect(etaBand(s, left + 1, slots)!.seconds).toBeGreaterThanOrEqual(once.seconds);
      }),
    );
  });
});

describe('the band holds', () => {
  /** A seeded generator (mulberry32): the same draws on every run. */
  function rng(seed: number): () => number {
    return () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  it('holds the real end of frames like those seen so far, at 25 % done, in nearly every job', () => {
    const random = rng(28);
    let inside = 0;
    const jobs = 400;
    for (let j = 0; j < jobs; j++) {
      // Lognormal frame times around a job's own scale, 40 to 400 frames on 1 to 8 slots.
      const scale = 1 + random() * 60;
      const frames = Array.from(
        { length: 40 + Math.floor(random() * 360) },
        () => scale * Math.exp(0.4 * Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random())),
      );
      const slots = 1 + Math.floor(random() * 8);
      const seen = Math.ceil(frames.length / 4);
      const eta = etaBand(frames.slice(0, seen), frames.length - seen, slots)!;
      const truth = frames.slice(seen).reduce((a, b) => a + b, 0) / slots;
      if (truth >= eta.lowSeconds && truth <= eta.highSeconds) inside++;
    }
    expect(inside / jobs).toBeGreaterThanOrEqual(0.95);
  });
});

describe('summarizeFrames', () => {
  it('gives the median, the 10th-90th percentile spread and the highest peak memory', () => {
    const rows = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((s, i) => ({
      frame: i + 1,
      renderSeconds: s,
      peakMemoryBytes: i === 3 ? null : 1000 * s,
    }));
    expect(summarizeFrames(rows)).toEqual({
      framesDone: 11,
      medianSeconds: 6,
      p10Seconds: 2,
      p90Seconds: 10,
      peakMemoryMaxBytes: 11_000,
    });
  });

  it('counts a frame rendered twice once, and says nothing before the first frame', () => {
    expect(
      summarizeFrames([
        { frame: 1, renderSeconds: 2, peakMemoryBytes: null },
        { frame: 1, renderSeconds: 3, peakMemoryBytes: null },
      ]).framesDone,
    ).toBe(1);
    expect(summarizeFrames([])).toEqual({
      framesDone: 0,
      medianSeconds: null,
      p10Seconds: null,
      p90Seconds: null,
      peakMemoryMaxBytes: null,
    });
  });

  it('keeps the spread ordered for any times', () => {
    fc.assert(
      fc.property(times, (s) => {
        const sum = summarizeFrames(s.map((renderSeconds, i) => ({ frame: i, renderSeconds, peakMemoryBytes: null })));
        expect(sum.p10Seconds!).toBeLessThanOrEqual(sum.medianSeconds!);
        expect(sum.medianSeconds!).toBeLessThanOrEqual(sum.p90Seconds!);
      }),
    );
  });
});

describe('activeSlots', () => {
  const at = (ms: number) => new Date(ms).toISOString();
  it('counts the slots that finished a frame lately, and at least one', () => {
    const now = 1_000_000;
    const rows = [
      { renderSeconds: 5, slot: 'a/cpu-0', finishedAt: at(now - 2_000) },
      { renderSeconds: 5, slot: 'b/cpu-0', finishedAt: at(now - 20_000) },
      { renderSeconds: 5, slot: 'c/cpu-0', finishedAt: at(now - 600_000) },
    ];
    expect(activeSlots(rows, now)).toBe(2);
    expect(activeSlots(rows, now + 3_600_000)).toBe(1);
    expect(activeSlots([], now)).toBe(1);
  });

  it('keeps a slow slot working for a few of its frames', () => {
    const now = 10_000_000;
    expect(activeSlots([{ renderSeconds: 300, slot: 'a/gpu-1', finishedAt: at(now - 600_000) }], now)).toBe(1);
    expect(
      activeSlots(
        [
          { renderSeconds: 300, slot: 'a/gpu-1', finishedAt: at(now - 600_000) },
          { renderSeconds: 300, slot: 'b/gpu-1', finishedAt: at(now) },
        ],
        now,
      ),
    ).toBe(2);
  });
});

it('quantile interpolates between sorted values', () => {
  expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
  expect(quantile([7], 0.9)).toBe(7);
});
