// One conformance suite for every RateLimiter adapter: token-bucket budgets per key.
import { describe, expect, it } from 'vitest';
import type { RateBudget } from '../../../service/domain/rate-budget.js';
import type { RateLimiter } from '../../../service/ports/rate-limit.js';
import { withHarness } from './with-harness.js';

export interface RateLimiterHarness {
  /**
   * A limiter with `budget` whose buckets refill by `now` (default: its own clock); `other()` is a
   * second instance on the same backing store (null when it has none).
   */
  open(
    budget: RateBudget,
    now?: () => number,
  ): Promise<{ limiter: RateLimiter; other: (() => Promise<RateLimiter>) | null; close(): Promise<void> }>;
}

export function rateLimiterConformance(name: string, harness: RateLimiterHarness): void {
  describe(`RateLimiter conformance: ${name}`, () => {
    const withLimiter = (
      budget: RateBudget,
      fn: (h: Awaited<ReturnType<RateLimiterHarness['open']>>) => Promise<void>,
      now?: () => number,
    ) => withHarness(() => harness.open(budget, now))(fn);

    it(
      'allows a burst of max, then refuses and says when the next request is allowed',
      withLimiter({ max: 5, windowMs: 60_000 }, async ({ limiter }) => {
        const decisions = [];
        for (let i = 0; i < 7; i++) decisions.push(await limiter.take('key-a'));
        expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false]);
        expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0]);
        expect(decisions.every((d) => d.limit === 5)).toBe(true);
        expect(decisions[0]!.retryAfterMs).toBe(0);
        // One token per 12 s: the next request is allowed within 12 s, not sooner than ~11 s.
        expect(decisions[5]!.retryAfterMs).toBeGreaterThan(11_000);
        expect(decisions[5]!.retryAfterMs).toBeLessThanOrEqual(12_000);
        // Full again after about the whole window.
        expect(decisions[6]!.resetMs).toBeGreaterThan(59_000);
        expect(decisions[6]!.resetMs).toBeLessThanOrEqual(60_000);
      }),
    );

    it(
      'charges a request by its cost: refused, and charged nothing, unless that many tokens are left',
      withLimiter({ max: 10, windowMs: 60_000 }, async ({ limiter }) => {
        expect(await limiter.take('key-c', 4)).toMatchObject({ allowed: true, remaining: 6 });
        expect(await limiter.take('key-c', 5)).toMatchObject({ allowed: true, remaining: 1 });
        const refused = await limiter.take('key-c', 3);
        expect(refused).toMatchObject({ allowed: false, remaining: 1 });
        // Two more tokens at one per 6 s.
        expect(refused.retryAfterMs).toBeGreaterThan(11_000);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(12_000);
        // The refused request took nothing: a plain one still fits.
        expect(await limiter.take('key-c')).toMatchObject({ allowed: true, remaining: 0 });
        // A cost beyond the bucket is charged as the whole bucket, so it can pass once refilled.
        expect(await limiter.take('key-d', 50)).toMatchObject({ allowed: true, remaining: 0 });
      }),
    );

    it(
      'keeps one budget per key',
      withLimiter({ max: 2, windowMs: 60_000 }, async ({ limiter }) => {
        await limiter.take('key-a');
        await limiter.take('key-a');
        expect((await limiter.take('key-a')).allowed).toBe(false);
        expect(await limiter.take('key-b')).toMatchObject({ allowed: true, remaining: 1 });
      }),
    );

    // The limiter's clock is the test's: time moves by exactly what each step needs, however slowly the machine runs.
    let now = Date.UTC(2026, 0, 1);
    it(
      'refills continuously: a spent budget allows again after windowMs / max',
      withLimiter(
        { max: 4, windowMs: 60_000 },
        async ({ limiter }) => {
          for (let i = 0; i < 4; i++) expect((await limiter.take('key-r')).allowed).toBe(true);
          const refused = await limiter.take('key-r');
          expect(refused.allowed).toBe(false);
          // One token per 15 s.
          expect(refused.retryAfterMs).toBeGreaterThan(14_000);
          expect(refused.retryAfterMs).toBeLessThanOrEqual(15_000);
          now += refused.retryAfterMs;
          expect((await limiter.take('key-r')).allowed).toBe(true);
          expect((await limiter.take('key-r')).allowed).toBe(false);
          // Never more than max at once, however long the key was idle.
          now += 10 * 60_000;
          const burst = [];
          for (let i = 0; i < 6; i++) burst.push((await limiter.take('key-r')).allowed);
          expect(burst).toEqual([true, true, true, true, false, false]);
        },
        () => now,
      ),
    );

    it(
      'shares the budget between instances on the same store, where it has one',
      withLimiter({ max: 3, windowMs: 60_000 }, async ({ limiter, other }) => {
        if (!other) {
          console.info(`${name}: budgets live in one process; nothing is shared between instances`);
          expect(other).toBeNull();
          return;
        }
        const second = await other();
        expect((await limiter.take('shared')).allowed).toBe(true);
        expect((await second.take('shared')).allowed).toBe(true);
        expect((await limiter.take('shared')).allowed).toBe(true);
        expect((await second.take('shared')).allowed).toBe(false);
        expect((await limiter.take('shared')).allowed).toBe(false);
      }),
    );
  });
}
