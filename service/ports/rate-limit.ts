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

/** The port: takes one request from a key's budget. */
export interface RateLimiter {
  /** Synchronous when answered from memory: it runs on every request. */
  take(key: string): RateDecision | Promise<RateDecision>;
  close?(): Promise<void> | void;
}
