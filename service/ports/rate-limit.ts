// Per-key request budgets (service/domain/rate-budget.ts does the arithmetic).

/** What one request costs a key's budget (service/domain/rate-budget.ts does the arithmetic). */
export interface RateDecision {
  allowed: boolean;
  /** The bucket's size (the `max` requests of the budget). */
  limit: number;
  /** Whole requests left after this one. */
  remaining: number;
  /** How long until one more request is allowed; 0 when this one was. */
  retryAfterMs: number;
  /** How long until the bucket is full again. */
  resetMs: number;
}

/** The port: takes one request, or `cost` requests' worth, from a key's budget. */
export interface RateLimiter {
  /**
   * Synchronous when answered from memory: it runs on every request. `cost` (default 1) charges
   * a request by the work it asks for (bench:attack): refused unless that many tokens are left,
   * and then nothing is taken.
   */
  take(key: string, cost?: number): RateDecision | Promise<RateDecision>;
  close?(): Promise<void> | void;
}
