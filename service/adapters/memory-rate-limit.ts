// Rate budgets in this process's memory: one service instance (the embedded default).
import { decide, refill, type RateBudget } from '../domain/rate-budget.js';
import type { RateDecision, RateLimiter } from '../ports/rate-limit.js';

/**
 * Buckets in this process's memory. Keys beyond `maxKeys` push out the least recently used
 * (a forgotten bucket starts full again, which only errs towards letting a request through).
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly budget: RateBudget,
    private readonly opts: {
      /** Buckets kept. Default 100000 (a few MB). */
      maxKeys?: number;
      /** The clock buckets refill by, epoch ms. Default Date.now. */
      now?: () => number;
    } = {},
  ) {}

  take(key: string, cost = 1): RateDecision {
    const now = (this.opts.now ?? Date.now)();
    const b = this.buckets.get(key);
    const before = b ? refill(b.tokens, now - b.at, this.budget) : this.budget.max;
    const { tokens, decision } = decide(before, this.budget, cost);
    if (b) {
      // Re-inserting moves the key to the end of the Map's order: most recently used.
      this.buckets.delete(key);
      b.tokens = tokens;
      b.at = now;
      this.buckets.set(key, b);
    } else {
      this.buckets.set(key, { tokens, at: now });
      if (this.buckets.size > (this.opts.maxKeys ?? 100_000)) this.buckets.delete(this.buckets.keys().next().value!);
    }
    return decision;
  }
}
