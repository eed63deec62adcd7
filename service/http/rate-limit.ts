// The rate limiter's answer as HTTP: x-ratelimit-* headers and the 429. The budgets themselves
// are a port (service/ports/rate-limit.ts) with memory and Redis adapters.
import type { FastifyReply } from 'fastify';
import type { RateDecision } from '../ports/rate-limit.js';
import { ApiError } from './api-error.js';

/**
 * Sets the x-ratelimit-* headers (as GitHub and @fastify/rate-limit do) and returns the 429
 * error when the request is over budget.
 */
export function applyDecision(d: RateDecision, reply: FastifyReply): ApiError | undefined {
  void reply
    .header('x-ratelimit-limit', d.limit)
    .header('x-ratelimit-remaining', d.remaining)
    .header('x-ratelimit-reset', Math.ceil(d.resetMs / 1000));
  if (d.allowed) return undefined;
  const seconds = Math.max(1, Math.ceil(d.retryAfterMs / 1000));
  return new ApiError('RATE_LIMITED', {
    metadata: { limit: d.limit, retryAfterSeconds: seconds },
    headers: { 'retry-after': String(seconds) },
  });
}
