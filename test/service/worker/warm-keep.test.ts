// The pool and key logic behind an estimate's Blender kept for its render, on stand-in processes
// (the real handover: test/e2e/estimate-takeover.test.ts): a use's keep time replaces the pool's idle
// time until the next use, the next use without one goes back to it, a key of the same job with other
// settings ends the kept process, so does its job's end seen by asking the job, and the key changes with
// the render settings but not with the frames.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import { WarmPool, type WarmProcess } from '../../../service/worker/runtime/warm-pool.js';
import { settingsFingerprint, warmKey } from '../../../service/worker/render/warm-key.js';

class Stand implements WarmProcess {
  alive = true;
  private done!: () => void;
  readonly ended = new Promise<void>((r) => (this.done = r));
  kill(): void {
    this.alive = false;
    this.done();
  }
}

const plenty = () => 2 ** 40;

/** A use of `stand` at the slot and key that does nothing with it; `keepMs`, the use's keep time. */
const park = (pool: WarmPool<Stand>, slot: string, key: string, job: string, stand: Stand, keepMs?: number) =>
  pool.use(
    slot,
    key,
    job,
    () => stand,
    async () => undefined,
    keepMs === undefined ? {} : { keepMs },
  );

afterEach(() => {
  vi.useRealTimers();
});

describe('WarmPool keep time', () => {
  it("keeps a process for the use's keepMs, then for idleMs after a use without one", async () => {
    vi.useFakeTimers();
    const pool = new WarmPool<Stand>({ idleMs: 1000, availableMemory: plenty, memoryCheckMs: 0 });
    const first = new Stand();
    await park(pool, 's', 'k', 'job', first, 5000);
    await vi.advanceTimersByTimeAsync(4000);
    // Past the pool's idle time, inside the keep time: still there.
    expect(first.alive).toBe(true);
    let started = 0;
    const again = await pool.use(
      's',
      'k',
      'job',
      () => (started++, new Stand()),
      async (p) => p,
    );
    expect(again).toBe(first);
    expect(started).toBe(0);
    // The render's use asked for no keep time: the pool's idle time again.
    await vi.advanceTimersByTimeAsync(1100);
    expect(first.alive).toBe(false);
    expect(pool.live()).toEqual([]);
  });

  it('ends a kept process when its job asks the slot with other settings, or is ended', async () => {
    const pool = new WarmPool<Stand>({ idleMs: 60_000, availableMemory: plenty, memoryCheckMs: 0 });
    const kept = new Stand();
    await park(pool, 's', 'job\nblender\naaaa', 'job', kept, 120_000);
    const other = new Stand();
    await park(pool, 's', 'job\nblender\nbbbb', 'job', other);
    expect(kept.alive).toBe(false);
    expect(pool.live()).toMatchObject([{ slot: 's', key: 'job\nblender\nbbbb' }]);
    await pool.endJob('job', 'its job was canceled');
    expect(other.alive).toBe(false);
    expect(pool.live()).toEqual([]);
    await pool.close();
  });

  it('ends an idle process whose job no longer wants it (canceled where this worker was not told)', async () => {
    vi.useFakeTimers();
    let canceled = false;
    const pool = new WarmPool<Stand>({
      idleMs: 60_000,
      availableMemory: plenty,
      memoryCheckMs: 100,
      wantedCheckMs: 500,
      wanted: async (jobId) => !(jobId === 'gone' && canceled),
    });
    const [gone, stays] = [new Stand(), new Stand()];
    await park(pool, 'a', 'gone', 'gone', gone, 120_000);
    await park(pool, 'b', 'stays', 'stays', stays, 120_000);
    await vi.advanceTimersByTimeAsync(1000);
    expect([gone.alive, stays.alive]).toEqual([true, true]);
    canceled = true;
    await vi.advanceTimersByTimeAsync(600);
    expect([gone.alive, stays.alive]).toEqual([false, true]);
    expect(pool.live().map((l) => l.jobId)).toEqual(['stays']);
    await pool.close();
  });
});

describe('warmKey', () => {
  const final: FinalConfig = {
    renderEngine: 'CYCLES',
    sampleCount: 16,
    resolution: [64, 48],
    frameRanges: ['1-9'],
    outputFormat: 'PNG',
  } as FinalConfig;
  const requested = { frameRanges: ['1-9'], sampleCount: 16 };

  it('is the same for an estimate and a render of the same settings, whatever their frames', () => {
    const estimate = { jobId: 'j', final, requested };
    const render = {
      jobId: 'j',
      final: { ...final, frameRanges: ['1-100'] } as FinalConfig,
      requested: { ...requested, frameRanges: ['1-100'] },
    };
    expect(warmKey(render, '/b/blender')).toBe(warmKey(estimate, '/b/blender'));
  });

  it('differs with the render settings, the build and the job', () => {
    const base = { jobId: 'j', final, requested };
    const key = warmKey(base, '/b/blender');
    const more = { ...base, final: { ...final, sampleCount: 64 } as FinalConfig, requested: { sampleCount: 64 } };
    expect(warmKey(more, '/b/blender')).not.toBe(key);
    expect(warmKey({ ...base, final: { ...final, resolution: [128, 96] } as FinalConfig }, '/b/blender')).not.toBe(key);
    expect(warmKey(base, '/other/blender')).not.toBe(key);
    expect(warmKey({ ...base, jobId: 'k' }, '/b/blender')).not.toBe(key);
    expect(settingsFingerprint(base)).toMatch(/^[0-9a-f]{16}$/);
  });
});
