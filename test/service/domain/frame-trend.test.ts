// The ETA that follows frame times changing along the timeline (service/domain/frame-trend.ts):
// a camera flying into a heavy region makes later frames slower, which the plain mean misses.
import { describe, expect, it } from 'vitest';
import { etaBand } from '../../../service/domain/frame-eta.js';
import { fitLine, trendEta } from '../../../service/domain/frame-trend.js';

/** A seeded generator (mulberry32): the same draws on every run. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const frames = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('trendEta', () => {
  it('is the plain band where frame times do not change along the timeline', () => {
    const samples = [3, 3.2, 2.9, 3.1, 3, 2.8].map((seconds, i) => ({ frame: i + 1, seconds }));
    expect(trendEta(samples, frames(7, 60), 54, 2)).toEqual(
      etaBand(
        samples.map((s) => s.seconds),
        54,
        2,
      ),
    );
  });

  it("follows frames that grow slower: the centre from the line, the band reaching down to the mean's", () => {
    // 1 s at frame 1 growing 0.1 s a frame; 20 frames seen, 80 left on 2 slots.
    const samples = frames(1, 20).map((frame) => ({ frame, seconds: 0.9 + 0.1 * frame }));
    const truth = frames(21, 100).reduce((s, f) => s + 0.9 + 0.1 * f, 0) / 2;
    const eta = trendEta(samples, frames(21, 100), 80, 2)!;
    expect(eta.seconds).toBeCloseTo(truth, 0);
    expect(eta.highSeconds).toBeGreaterThan(truth);
    expect(eta.lowSeconds).toBeLessThanOrEqual(
      etaBand(
        samples.map((s) => s.seconds),
        80,
        2,
      )!.lowSeconds,
    );
  });

  it('never predicts a frame beyond four times the slowest seen, nor below a quarter of the fastest', () => {
    const samples = frames(1, 5).map((frame) => ({ frame, seconds: frame }));
    const eta = trendEta(samples, frames(10_000, 10_009), 10, 1)!;
    expect(eta.seconds).toBe(200);
  });

  it('holds the real end at 25 % done for ramps up and down, and is within 10 % for most', () => {
    const random = rng(2028);
    for (const shape of [(x: number) => 1 + x, (x: number) => 1 + 2 * x, (x: number) => 2 - x]) {
      let inside = 0;
      const errors: number[] = [];
      for (let j = 0; j < 200; j++) {
        const n = 40 + Math.floor(random() * 360);
        const scale = 1 + random() * 60;
        const times = Array.from(
          { length: n },
          (_, i) =>
            scale *
            shape(i / n) *
            Math.exp(0.05 * Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random())),
        );
        const slots = 1 + Math.floor(random() * 8);
        const seen = Math.ceil(n / 4);
        const eta = trendEta(
          times.slice(0, seen).map((seconds, i) => ({ frame: i + 1, seconds })),
          frames(seen + 1, n),
          n - seen,
          slots,
        )!;
        const truth = times.slice(seen).reduce((a, b) => a + b, 0) / slots;
        if (truth >= eta.lowSeconds && truth <= eta.highSeconds) inside++;
        errors.push(Math.abs(eta.seconds - truth) / truth);
      }
      expect(inside / 200).toBeGreaterThanOrEqual(0.95);
      expect(errors.sort((a, b) => a - b)[100]).toBeLessThan(0.1);
    }
  });
});

describe('fitLine', () => {
  it('needs three frames at two positions at least', () => {
    expect(
      fitLine([
        { frame: 1, seconds: 1 },
        { frame: 2, seconds: 2 },
      ]),
    ).toBeNull();
    expect(fitLine([1, 2, 3].map((seconds) => ({ frame: 5, seconds })))).toBeNull();
    expect(fitLine([1, 2, 3].map((seconds) => ({ frame: seconds, seconds: 2 * seconds })))).toMatchObject({
      a: 0,
      b: 2,
      t: Infinity,
    });
  });
});
