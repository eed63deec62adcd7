// The rate and time left the daemon, the tray and the CLI show for packs and uploads, on a clock
// the test sets (the estimator's own option), so every number is exact.
import { describe, expect, it } from 'vitest';
import { TransferRate } from '../../../shared/client/transfer-rate.js';

function clocked(options: { windowMs?: number } = {}) {
  let now = 1_000_000;
  const rate = new TransferRate({ ...options, now: () => now });
  return { rate, advance: (ms: number) => (now += ms) };
}

describe('TransferRate', () => {
  it('knows no rate until two samples are far enough apart, then gives bytes/s and the seconds left', () => {
    const { rate, advance } = clocked();
    expect(rate.update(0, 10_000_000)).toEqual({ bytesPerSecond: 0, etaSeconds: null });
    advance(100);
    expect(rate.update(100_000, 10_000_000)).toEqual({ bytesPerSecond: 0, etaSeconds: null });
    advance(900);
    // 1 MB in the first second: 9 MB left at 1 MB/s.
    expect(rate.update(1_000_000, 10_000_000)).toEqual({ bytesPerSecond: 1_000_000, etaSeconds: 9 });
  });

  it('measures over the last window only, so a slowdown shows within seconds', () => {
    const { rate, advance } = clocked({ windowMs: 2000 });
    rate.update(0, 100_000_000);
    for (let s = 1; s <= 10; s++) {
      advance(1000);
      rate.update(s * 4_000_000, 100_000_000);
    }
    // Now 1 MB/s: after two slow seconds the window holds only them.
    advance(1000);
    rate.update(41_000_000, 100_000_000);
    advance(1000);
    const slow = rate.update(42_000_000, 100_000_000);
    expect(slow.bytesPerSecond).toBe(1_000_000);
    expect(slow.etaSeconds).toBe(58);
  });

  it('starts over when the count goes back (a part sent again) and says 0 s left once done', () => {
    const { rate, advance } = clocked();
    rate.update(0, 2_000_000);
    advance(1000);
    rate.update(1_500_000, 2_000_000);
    advance(500);
    expect(rate.update(1_000_000, 2_000_000)).toEqual({ bytesPerSecond: 0, etaSeconds: null });
    advance(1000);
    expect(rate.update(2_000_000, 2_000_000)).toEqual({ bytesPerSecond: 1_000_000, etaSeconds: 0 });
  });

  it('answers 0 s left for nothing to send', () => {
    const { rate } = clocked();
    expect(rate.update(0, 0)).toEqual({ bytesPerSecond: 0, etaSeconds: 0 });
  });
});
