// The estimate's figures (service/domain/estimate-figures.ts): the figures, bands and words it
// answers from its samples (which frames it samples: estimate-samples.test.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  estimateFigures,
  parseRates,
  type EstimateInput,
  type FarmSlot,
} from '../../../service/domain/estimate-figures.js';
import { etaBand, renderRows } from '../../../service/domain/frame-eta.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const GiB = 1024 ** 3;

function input(over: Partial<EstimateInput> = {}): EstimateInput {
  return {
    frames: range(1, 100),
    samples: [1, 50, 100].map((frame) => ({ frame, seconds: 10, peakMemoryBytes: 2 * GiB, device: 'CPU' })),
    loadSeconds: [4],
    outputBytes: [1000, 1000, 1000],
    slots: [
      { kind: 'cpu', memoryBytes: 32 * GiB, free: true },
      { kind: 'cpu', memoryBytes: 32 * GiB, free: true },
    ],
    queueAheadSeconds: 0,
    rates: { CPU: 0.36 },
    ...over,
  };
}

describe('the frames an estimate kept', () => {
  it('leaves every frame the estimate kept out of the frames still to render, the cold lead too', () => {
    const samples = [2, 61, 120].map((frame) => ({ frame, seconds: 10, peakMemoryBytes: 2 * GiB, device: 'CPU' }));
    const f = estimateFigures(input({ frames: range(1, 120), samples, kept: [1, 2, 60, 61, 119, 120] }))!;
    expect(f.framesToRender).toBe(114);
    expect(f.renderSeconds.value).toBeCloseTo(1140, 0);
    expect(f.renderSeconds.basis).toBe(3);
    // Without the kept list, only the samples are left out (an estimate stored before pairs).
    expect(estimateFigures(input({ frames: range(1, 120), samples }))!.framesToRender).toBe(117);
  });
});

describe('the live ETA after an estimate', () => {
  it("rests on the render's own frames, not the estimate's cold samples", () => {
    // Three sampled frames alone in a fresh Blender (0.9 s each), then the render's warm frames (0.2 s).
    const rows = [
      ...[1, 24, 48].map((frame) => ({ frame, renderSeconds: 0.9 })),
      ...range(2, 10).map((frame) => ({ frame, renderSeconds: 0.2 })),
    ];
    const own = renderRows(rows, [1, 24, 48]);
    expect(own.map((r) => r.frame)).toEqual(range(2, 10));
    // 36 frames left on one slot: 7.2 s from the render's frames; the samples would have made it 90 % later.
    expect(
      etaBand(
        own.map((r) => r.renderSeconds),
        36,
        1,
      )!.seconds,
    ).toBeCloseTo(7.2, 1);
    expect(
      etaBand(
        rows.map((r) => r.renderSeconds),
        36,
        1,
      )!.seconds,
    ).toBeGreaterThan(7.2 * 1.5);
    // No estimate: every row.
    expect(renderRows(rows, undefined)).toHaveLength(rows.length);
  });
});

describe('estimate figures', () => {
  it('answers time, compute, cost, memory and size for steady frames', () => {
    const f = estimateFigures(input())!;
    expect(f.framesToRender).toBe(97);
    expect(f.renderSeconds.value).toBeCloseTo(970, 0);
    expect(f.renderSeconds.basis).toBe(3);
    // Two free CPU slots: half the compute, plus one scene load.
    expect(f.wallSeconds.value).toBeCloseTo(4 + 485, 0);
    expect(f.normalizedSeconds.value).toBeCloseTo(970, 0);
    expect(f.cost!.value).toBeCloseTo(0.1 * 0.97, 2);
    expect(f.outputBytes!.value).toBe(100_000);
    expect(f.peakMemoryBytes!.value).toBe(2 * GiB);
    expect(f.slotFits).toEqual([{ kind: 'cpu', capacityBytes: 32 * GiB, slots: 2, fits: 'yes' }]);
    expect(f.memorySummary).toContain('fits the 32 GB CPU slots');
    expect(f.warnings).toEqual([]);
  });

  it('says a peak above the GPU slots does not fit them and fits the CPU slots', () => {
    const slots: FarmSlot[] = [
      { kind: 'gpu', memoryBytes: 8 * GiB, free: true },
      { kind: 'cpu', memoryBytes: 64 * GiB, free: false },
    ];
    const f = estimateFigures(
      input({
        slots,
        samples: [1, 50, 100].map((frame) => ({ frame, seconds: 3, peakMemoryBytes: 11 * GiB, device: 'OPTIX' })),
        rates: { GPU: 3.6 },
      }),
    )!;
    expect(f.memorySummary).toContain('does not fit the 8 GB GPU slots');
    expect(f.memorySummary).toContain('fits the 64 GB CPU slots');
    expect(f.device).toBe('OPTIX');
    expect(f.warnings).toContain(
      'The peak memory does not fit the GPU slots the samples rendered on: the render would fail for memory ' +
        'there; it fits the CPU slots.',
    );
    expect(f.normalizedSeconds.value).toBeCloseTo(f.renderSeconds.value * 5, 0);
    expect(f.cost!.value).toBeCloseTo(f.renderSeconds.value / 1000, 2);
  });

  it('warns in words where frame times vary, frames are few, no slot is free or no price is set', () => {
    const varying = [1, 50, 100].map((frame, i) => ({
      frame,
      seconds: [2, 4, 10][i]!,
      peakMemoryBytes: null,
      device: 'CPU',
    }));
    const f = estimateFigures(
      input({
        samples: varying,
        rates: {},
        slots: [{ kind: 'cpu', memoryBytes: null, free: false }],
        queueAheadSeconds: 120,
      }),
    )!;
    expect(f.warnings).toContain('Frame times vary 5x along the timeline: the band is wide.');
    expect(f.warnings.some((w) => w.includes('No CPU slot is free now') && w.includes('120 s'))).toBe(true);
    expect(f.warnings.some((w) => w.includes('No price is configured for CPU'))).toBe(true);
    expect(f.cost).toBeNull();
    expect(f.memorySummary).toContain('no peak memory');
    expect(f.wallSeconds.value).toBeGreaterThanOrEqual(120);
    const one = estimateFigures(input({ samples: [varying[0]!] }))!;
    expect(one.warnings[0]).toBe('The estimate rests on 1 frame only: the band is wide.');
  });

  it('keeps every band around its figure, with the frames it rests on', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            seconds: fc.double({ min: 0.01, max: 1000, noNaN: true }),
            mem: fc.option(fc.integer({ min: 1, max: 64 * GiB })),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        fc.integer({ min: 1, max: 16 }),
        fc.double({ min: 0, max: 1e5, noNaN: true }),
        (rows, free, queue) => {
          const frames = range(1, 200);
          const samples = rows.map((r, i) => ({
            frame: 1 + i * 20,
            seconds: r.seconds,
            peakMemoryBytes: r.mem,
            device: 'CPU',
          }));
          const slots = Array.from({ length: free }, () => ({
            kind: 'cpu' as const,
            memoryBytes: 16 * GiB,
            free: true,
          }));
          const f = estimateFigures(input({ frames, samples, slots, queueAheadSeconds: queue }))!;
          for (const b of [
            f.wallSeconds,
            f.renderSeconds,
            f.normalizedSeconds,
            f.cost!,
            f.loadSeconds!,
            f.outputBytes!,
          ]) {
            expect(b.low).toBeLessThanOrEqual(b.value + 1e-9);
            expect(b.value).toBeLessThanOrEqual(b.high + 1e-9);
          }
          expect(f.renderSeconds.basis).toBe(samples.length);
          expect(f.wallSeconds.value).toBeGreaterThanOrEqual(queue - 0.1);
          // More slots never make the wall time longer than the compute time plus load and queue.
          expect(f.wallSeconds.value).toBeLessThanOrEqual(f.renderSeconds.value + 4 * 2 + queue + 0.5);
          if (f.peakMemoryBytes) expect(f.peakMemoryBytes.high).toBeGreaterThanOrEqual(f.peakMemoryBytes.value);
        },
      ),
    );
  });

  it("reads the operator's rates and names a bad entry", () => {
    expect(parseRates('CPU=0.4, optix=2.5,GPU=2')).toEqual({ CPU: 0.4, OPTIX: 2.5, GPU: 2 });
    expect(parseRates('')).toEqual({});
    expect(() => parseRates('CPU:1')).toThrow('"CPU:1" is not DEVICE=PRICE');
  });
});

describe("the estimate's Blender kept for the render (warm slots)", () => {
  // 97 frames left at 10 s, a 4 s load, a 2 s warm-up and 3 s fetching the project on each slot.
  const cold = { loadSeconds: [4], warmupSeconds: [2], overheadSeconds: 3 };
  const cpu = (warm: boolean, free = true): FarmSlot => ({ kind: 'cpu', memoryBytes: null, free, warm });

  it('counts no fetch, load or warm-up when the one slot holds it', () => {
    const before = estimateFigures(input({ ...cold, slots: [cpu(false)] }))!;
    const warm = estimateFigures(input({ ...cold, slots: [cpu(true)], warmKeepSeconds: 120 }))!;
    expect(before.wallSeconds.value).toBeCloseTo(970 + 9, 0);
    expect(warm.wallSeconds.value).toBeCloseTo(970, 0);
    for (const edge of ['low', 'high'] as const)
      expect(before.wallSeconds[edge] - warm.wallSeconds[edge]).toBeGreaterThanOrEqual(3 + 4 / 2 + 2 / 2);
    expect(warm.renderSeconds).toEqual(before.renderSeconds);
    expect(warm.warnings).toContain(
      "The wall time counts no scene load: it assumes the render starts while the estimate's Blender waits for " +
        'it on its slot (120 s after the estimate); later, the load comes back.',
    );
    expect(before.warnings).toEqual([]);
  });

  it('still counts them when another slot the render may take is cold: the wall is the slowest slot', () => {
    const f = estimateFigures(input({ ...cold, slots: [cpu(true), cpu(false)] }))!;
    expect(f.wallSeconds.value).toBeCloseTo(485 + 9, 0);
    // A busy cold slot is not one the render takes now; a warm slot with queued work ahead is taken first.
    expect(estimateFigures(input({ ...cold, slots: [cpu(true), cpu(false, false)] }))!.wallSeconds.value).toBeCloseTo(
      970,
      0,
    );
    const queued = estimateFigures(input({ ...cold, slots: [cpu(true)], queueAheadSeconds: 30 }))!;
    expect(queued.wallSeconds.value).toBeCloseTo(30 + 9 + 970, 0);
  });

  it('counts them as before when no slot holds it', () => {
    const f = estimateFigures(input({ ...cold }))!;
    expect(f.wallSeconds.value).toBeCloseTo(485 + 9, 0);
    expect(estimateFigures(input({ ...cold, slots: [cpu(false)] }))!.wallSeconds.value).toBeCloseTo(970 + 9, 0);
  });
});
