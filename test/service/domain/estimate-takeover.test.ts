// What moves from an estimate's own cost to the job's bill when the render takes over the
// estimate's Blender: its load and its warm-up, once, the two bills together unchanged
// (service/domain/estimate-takeover.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { leadCosts } from '../../../service/domain/estimate-samples.js';
import { takenWarmup, takeover } from '../../../service/domain/estimate-takeover.js';
import { normalizedSeconds, type RenderRun } from '../../../service/domain/normalized-seconds.js';

const cpu = (seconds: number): RenderRun => ({ seconds, device: 'CPU' });

describe('the warm-up the render takes over', () => {
  it("is the lead's measured excess: EEVEE's 3.9 s shader compile and 1.3 s on the second frame", () => {
    const lead = [3.9 + 0.2, 1.3 + 0.2, 0.2];
    const costs = leadCosts(lead, [])!;
    expect(takenWarmup({ warmupSeconds: costs.warmupSeconds, leadSeconds: lead })).toBeCloseTo(5.2, 9);
  });

  it('is nothing where none was measured', () => {
    expect(takenWarmup(null)).toBe(0);
    expect(takenWarmup(undefined)).toBe(0);
    expect(takenWarmup({ warmupSeconds: 0, leadSeconds: [0.2, 0.2, 0.2] })).toBe(0);
    expect(takenWarmup({ warmupSeconds: Number.NaN, leadSeconds: [5, 1, 0.2] })).toBe(0);
  });

  it('is never negative', () => {
    expect(takenWarmup({ warmupSeconds: -0.4, leadSeconds: [0.1, 0.1, 0.3] })).toBe(0);
  });

  it('is never more than the cold lead frames took themselves', () => {
    expect(takenWarmup({ warmupSeconds: 9, leadSeconds: [4, 1.5, 0.2] })).toBe(5.5);
    expect(takenWarmup({ warmupSeconds: 2, leadSeconds: [] })).toBe(0);
  });

  it('lies between 0 and the cold frames for any lead', () => {
    const secs = fc.double({ min: 0, max: 100, noNaN: true });
    fc.assert(
      fc.property(fc.tuple(secs, secs, secs), (lead) => {
        const w = takenWarmup({ warmupSeconds: leadCosts(lead, [])!.warmupSeconds, leadSeconds: lead });
        expect(w).toBeGreaterThanOrEqual(0);
        expect(w).toBeLessThanOrEqual(lead[0] + lead[1] + 1e-9);
      }),
    );
  });
});

describe('the takeover', () => {
  const lead = { warmupSeconds: 5.2, leadSeconds: [4.1, 1.5, 0.2] };

  it('takes the load and the warm-up off the own cost and bills the warm-up at the load device', () => {
    const load = { seconds: 2, device: 'CUDA', gpus: 1 } as const;
    const t = takeover({ ownSeconds: 12, ownNormalizedSeconds: 48 }, load, lead)!;
    expect(t.warmup).toEqual({ seconds: 5.2, device: 'CUDA', gpus: 1 });
    expect(t.ownSeconds).toBeCloseTo(4.8, 9);
    expect(t.ownNormalizedSeconds).toBeCloseTo(48 - 4 * 7.2, 9);
  });

  it('moves only the load where no warm-up was measured', () => {
    const t = takeover({ ownSeconds: 3.4, ownNormalizedSeconds: 3.4 }, cpu(1.2), null)!;
    expect(t.warmup.seconds).toBe(0);
    expect(t).toMatchObject({ ownSeconds: 2.2, ownNormalizedSeconds: 2.2 });
  });

  it('moves no more warm-up than the load left of the own cost', () => {
    const t = takeover({ ownSeconds: 4, ownNormalizedSeconds: 4 }, cpu(1.5), lead)!;
    expect(t.warmup.seconds).toBeCloseTo(2.5, 9);
    expect(t).toMatchObject({ ownSeconds: 0, ownNormalizedSeconds: 0 });
  });

  it('moves nothing a second time', () => {
    const first = takeover({ ownSeconds: 12, ownNormalizedSeconds: 12 }, cpu(2), lead)!;
    expect(takeover({ ...first, takenOver: true }, cpu(2), lead)).toBeNull();
  });

  it('leaves the estimate and the job billed together what they were', () => {
    const secs = fc.double({ min: 0, max: 50, noNaN: true });
    fc.assert(
      fc.property(secs, secs, fc.tuple(secs, secs, secs), (own, load, leadTimes) => {
        // The estimate's own cost holds its load and lead frames, and perhaps more samples.
        const ownSeconds = Math.round((own + load + leadTimes[0] + leadTimes[1] + leadTimes[2]) * 10) / 10;
        const measured = { warmupSeconds: leadCosts(leadTimes, [])!.warmupSeconds, leadSeconds: leadTimes };
        const t = takeover({ ownSeconds, ownNormalizedSeconds: ownSeconds }, cpu(load), measured)!;
        // Billed before: the estimate's own. After: what is left of it, and the load and warm-up on the job.
        const after = t.ownSeconds + load + t.warmup.seconds;
        expect(Math.abs(after - ownSeconds)).toBeLessThanOrEqual(0.05 + 1e-9);
        const nAfter = t.ownNormalizedSeconds + normalizedSeconds([cpu(load), t.warmup]);
        expect(Math.abs(nAfter - ownSeconds)).toBeLessThanOrEqual(0.1 + 1e-9);
      }),
    );
  });
});
