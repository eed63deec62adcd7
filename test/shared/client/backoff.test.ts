// Retry timing: Retry-After parsing, full-jitter bounds, and abortable sleep.
import { describe, expect, it } from 'vitest';
import { backoffDelay, parseRetryAfter, sleep } from '../../../shared/client/backoff.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');

  it('reads delta-seconds and HTTP-dates', () => {
    expect(parseRetryAfter('1', now)).toBe(1000);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:00:05 GMT', now)).toBe(5000);
    // A date already passed means "now", not a negative wait.
    expect(parseRetryAfter('Mon, 31 Dec 2029 23:59:00 GMT', now)).toBe(0);
  });

  it('ignores absent or unreadable values', () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  const opts = { baseDelayMs: 500, maxDelayMs: 30_000 };

  it('draws from [0, base * 2^attempt], capped at maxDelayMs', () => {
    expect(backoffDelay(0, opts, undefined, () => 0)).toBe(0);
    expect(backoffDelay(0, opts, undefined, () => 0.999_999)).toBe(499);
    expect(backoffDelay(3, opts, undefined, () => 0.5)).toBe(2000);
    expect(backoffDelay(20, opts, undefined, () => 0.999_999)).toBe(29_999);
  });

  it('never waits less than Retry-After, nor more than maxDelayMs', () => {
    expect(backoffDelay(0, opts, 1000, () => 0)).toBe(1000);
    expect(backoffDelay(5, opts, 1000, () => 0.5)).toBe(8000);
    expect(backoffDelay(0, opts, 3_600_000, () => 0)).toBe(30_000);
  });

  it('spreads delays with the default random source', () => {
    const values = Array.from({ length: 50 }, () => backoffDelay(4, opts));
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(8000);
    expect(new Set(values).size).toBeGreaterThan(1);
  });
});

describe('sleep', () => {
  it('waits, and rejects with the reason when aborted', async () => {
    const started = Date.now();
    await sleep(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);

    const controller = new AbortController();
    const reason = new Error('stop');
    setTimeout(() => controller.abort(reason), 20);
    await expect(sleep(10_000, controller.signal)).rejects.toBe(reason);
    await expect(sleep(10, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});
