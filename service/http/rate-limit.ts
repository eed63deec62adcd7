// Per-key request budgets. A token bucket: `max` requests at once, refilled continuously at
// `max` per `windowMs`, so a client that keeps to the budget is never refused and a burst is
// cut off smoothly rather than at a window edge. The port is answered synchronously from memory
// (one process) or by Redis (budgets shared by every service instance).
import type { FastifyReply } from 'fastify';
import { ApiError } from './api-error.js';

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

export interface RateBudget {
  /** Requests per window, and the burst allowed at once. */
  max: number;
  windowMs: number;
}

/** The bucket arithmetic both adapters share (Redis runs the same steps in Lua). */
export function refill(tokens: number, elapsedMs: number, budget: RateBudget): number {
  return Math.min(budget.max, tokens + (Math.max(0, elapsedMs) * budget.max) / budget.windowMs);
}

export function decide(tokensBefore: number, budget: RateBudget): { tokens: number; decision: RateDecision } {
  const perMs = budget.max / budget.windowMs;
  const allowed = tokensBefore >= 1;
  const tokens = allowed ? tokensBefore - 1 : tokensBefore;
  return {
    tokens,
    decision: {
      allowed,
      limit: budget.max,
      remaining: Math.floor(tokens),
      retryAfterMs: allowed ? 0 : Math.ceil((1 - tokens) / perMs),
      resetMs: Math.ceil((budget.max - tokens) / perMs),
    },
  };
}

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
      now?: () => number;
    } = {},
  ) {}

  take(key: string): RateDecision {
    const now = (this.opts.now ?? Date.now)();
    const b = this.buckets.get(key);
    const before = b ? refill(b.tokens, now - b.at, this.budget) : this.budget.max;
    const { tokens, decision } = decide(before, this.budget);
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

/**
 * Sets the x-ratelimit-* headers (as GitHub and @fastify/rate-limit do) and returns the 429
 * error when the request is over budget.
 */
export function applyDecision(d: RateDecision, reply: FastifyReply): ApiError | undefined {
  void reply.header('x-ratelimit-limit', d.limit).header('x-ratelimit-remaining', d.remaining).header('x-ratelimit-reset', Math.ceil(d.resetMs / 1000));
  if (d.allowed) return undefined;
  const seconds = Math.max(1, Math.ceil(d.retryAfterMs / 1000));
  return new ApiError('RATE_LIMITED', { metadata: { limit: d.limit, retryAfterSeconds: seconds }, headers: { 'retry-after': String(seconds) } });
}
