// Per-key request budgets. A token bucket: `max` requests at once, refilled continuously at
// `max` per `windowMs`, so a client that keeps to the budget is never refused and a burst is
// cut off smoothly rather than at a window edge. Pure arithmetic, shared by every RateLimiter
// adapter (Redis runs the same steps in Lua).
import type { RateDecision } from '../ports/rate-limit.js';

export interface RateBudget {
  /** Requests per window, and the burst allowed at once. */
  max: number;
  windowMs: number;
}

/** The bucket arithmetic both adapters share (Redis runs the same steps in Lua). */
export function refill(tokens: number, elapsedMs: number, budget: RateBudget): number {
  return Math.min(budget.max, tokens + (Math.max(0, elapsedMs) * budget.max) / budget.windowMs);
}

/** Charges `cost` tokens (default 1, at least 1) when that many are left; a cost over `max` is charged as `max`. */
export function decide(tokensBefore: number, budget: RateBudget, cost = 1): { tokens: number; decision: RateDecision } {
  const perMs = budget.max / budget.windowMs;
  const need = Math.min(Math.max(cost, 1), budget.max);
  const allowed = tokensBefore >= need;
  const tokens = allowed ? tokensBefore - need : tokensBefore;
  return {
    tokens,
    decision: {
      allowed,
      limit: budget.max,
      remaining: Math.floor(tokens),
      retryAfterMs: allowed ? 0 : Math.ceil((need - tokens) / perMs),
      resetMs: Math.ceil((budget.max - tokens) / perMs),
    },
  };
}
