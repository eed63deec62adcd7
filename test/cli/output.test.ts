// The pieces of the scripted output that need no service: --fields selection and the rate/ETA
// line of `jobs watch`.
import { describe, expect, it } from 'vitest';
import type { Job } from '../../shared/api/job.js';
import type { JobProgress } from '../../shared/api/progress.js';
import { parseFields, selectFields } from '../../cli/output.js';
import { createRate, formatDuration, watchLine } from '../../cli/watch-view.js';

describe('--fields', () => {
  const doc = {
    ok: true,
    exitCode: 0,
    job: { id: 'j1', status: 'rendering', requestedConfig: { sampleCount: 8 } },
    jobs: [{ id: 'a', status: 'x' }, { id: 'b' }],
    n: null,
  };

  it('keeps the named fields, nested as in the document, through arrays', () => {
    expect(selectFields(doc, parseFields('exitCode,job.status,job.requestedConfig.sampleCount')!)).toEqual({
      exitCode: 0,
      job: { status: 'rendering', requestedConfig: { sampleCount: 8 } },
    });
    expect(selectFields(doc, parseFields('jobs.id')!)).toEqual({ jobs: [{ id: 'a' }, { id: 'b' }] });
    expect(selectFields(doc, parseFields('job')!)).toEqual({ job: doc.job });
  });

  it('leaves out a path that does not exist but keeps a null', () => {
    expect(selectFields(doc, parseFields('nope,job.nope,n')!)).toEqual({ job: {}, n: null });
  });

  it('refuses an empty list or an empty segment as a usage error', () => {
    expect(() => parseFields(',')).toThrow(/--fields/);
    expect(() => parseFields('job..status')).toThrow(/--fields/);
    expect(parseFields(undefined)).toBeUndefined();
  });
});

describe('jobs watch line', () => {
  it('measures frames/min from what this watch saw and derives the ETA from it', () => {
    let t = 0;
    const rate = createRate(() => t);
    expect(rate(2)).toBeNull();
    t = 60_000;
    expect(rate(5)).toBe(3);
    const job = { id: '12345678-aaaa', status: 'rendering' } as Job;
    const p = {
      framesTotal: 11,
      framesDone: 5,
      framesFailed: 0,
      percent: 45,
      etaSeconds: null,
    } as unknown as JobProgress;
    expect(watchLine(job, p, 3)).toBe('12345678 rendering  5/11 frames (45%)  3.0 frames/min  ETA 2m00s');
    expect(watchLine(job, null, null)).toBe('12345678 rendering  rate: -  ETA: -');
  });

  it("shows the service's ETA with its band where the service has one (frame-stats)", () => {
    const job = { id: '12345678-aaaa', status: 'rendering' } as Job;
    const p = {
      framesTotal: 100,
      framesDone: 25,
      framesFailed: 0,
      percent: 25,
      etaSeconds: 240,
      etaBand: { seconds: 250, lowSeconds: 200, highSeconds: 330, samples: 25, slots: 4 },
    } as unknown as JobProgress;
    expect(watchLine(job, p, 6)).toBe(
      '12345678 rendering  25/100 frames (25%)  6.0 frames/min  ETA 4m10s (3m20s-5m30s)',
    );
  });

  it('formats durations', () => {
    expect(formatDuration(42)).toBe('42s');
    expect(formatDuration(3725)).toBe('1h02m');
  });
});
