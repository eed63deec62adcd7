// The render's fixed cost before its Blenders start (the project fetched and unpacked on each slot),
// measured by the estimate's own task (prepareSeconds, worker/handlers/estimate-sample.ts) and
// counted into the wall time once, since the slots pay it in parallel (estimate-figures.ts's
// overheadSeconds; service/routes/estimate.ts passes it). On a short job it is much of the wall time.
import { describe, expect, it } from 'vitest';
import { estimateFigures, type EstimateInput } from '../../../service/domain/estimate-figures.js';
import type { EstimateInternal } from '../../../service/domain/estimate-state.js';
import type { JobRecord } from '../../../service/ports/jobs.js';
import { presentEstimate } from '../../../service/routes/estimate.js';

const cpu = { kind: 'cpu' as const, memoryBytes: null, free: true };

/** A 10-frame job sampled on frames 1, 5 and 10 at 0.5 s a frame, a 1 s load, on `slots` free CPU slots. */
function shortJob(slots: number, overheadSeconds?: number): EstimateInput {
  return {
    frames: Array.from({ length: 10 }, (_, i) => i + 1),
    samples: [1, 5, 10].map((frame) => ({ frame, seconds: 0.5, peakMemoryBytes: null, device: 'CPU' })),
    loadSeconds: [1],
    outputBytes: [],
    slots: Array.from({ length: slots }, () => cpu),
    queueAheadSeconds: 0,
    rates: {},
    ...(overheadSeconds === undefined ? {} : { overheadSeconds }),
  };
}

describe("the render's fixed cost before its Blenders", () => {
  it('adds to the wall time once, whatever the slots, and to every edge of its band', () => {
    for (const slots of [1, 4]) {
      const without = estimateFigures(shortJob(slots))!;
      const withIt = estimateFigures(shortJob(slots, 3))!;
      expect(withIt.wallSeconds.value - without.wallSeconds.value).toBeCloseTo(3, 1);
      expect(withIt.wallSeconds.low - without.wallSeconds.low).toBeCloseTo(3, 1);
      expect(withIt.wallSeconds.high - without.wallSeconds.high).toBeCloseTo(3, 1);
      // Compute time (what billing counts) is Blender's alone.
      expect(withIt.renderSeconds).toEqual(without.renderSeconds);
    }
    // Here it is most of the wall time: 7 frames of 0.5 s, a 1 s load, 3 s fetching the project.
    const short = estimateFigures(shortJob(1, 3))!;
    expect(short.wallSeconds.value).toBeGreaterThan(2 * (short.renderSeconds.value - 3));
  });

  it("is the estimate's own measured wait, as GET /jobs/{id}/estimate answers it", async () => {
    const rec = { job: { id: 'j1', status: 'validated' }, internal: {} } as unknown as JobRecord;
    const est: EstimateInternal = {
      requestedConfig: { colorManagementPreset: 'default' },
      state: 'ready',
      startedAt: '2026-12-06T06:00:00.000Z',
      frames: [1, 5, 10],
      frameRanges: ['1-10'],
      samples: shortJob(1).samples.map((s) => ({ ...s })),
      loadSeconds: [1],
    };
    const deps = { rates: {}, now: Date.parse('2026-12-06T06:01:00.000Z') };
    const plain = await presentEstimate(rec, est, deps);
    const measured = await presentEstimate(rec, { ...est, prepareSeconds: [2, 4] }, deps);
    // The mean of the measured waits (3 s) on top; nothing measured (an older estimate) adds nothing.
    expect(measured.figures!.wallSeconds.value - plain.figures!.wallSeconds.value).toBeCloseTo(3, 1);
    expect(measured.figures!.renderSeconds).toEqual(plain.figures!.renderSeconds);
  });
});
