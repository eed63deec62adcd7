// Failed authentication, counted per remote address. A key is 256 random bits, so guessing is
// hopeless; what an address sending bad keys costs is a key lookup per request, and what it gains
// is a probe. Past the budget its failures answer 429 with Retry-After instead of 401. A request
// with a valid key is never counted nor refused: one bad client behind a shared proxy address
// does not lock out the others' working keys.
import type { FastifyRequest } from 'fastify';
import type { RateLimiter } from '../ports/rate-limit.js';
import { ApiError } from './api-error.js';

/** The budget's key for an address: apart from API keys' budgets in the same store. */
export const failureKey = (address: string): string => `auth-failure:${address}`;

/**
 * Charges one failure to the request's address and answers the error to send: `err` (the 401)
 * while under budget, else a 429 RATE_LIMITED saying why. The address is the socket's peer
 * (forwarding headers are not trusted, as everywhere in this service).
 */
export async function chargeFailure(
  failures: RateLimiter | undefined,
  req: FastifyRequest,
  err: ApiError,
): Promise<ApiError> {
  if (!failures) return err;
  const d = await failures.take(failureKey(req.ip || 'unknown'));
  if (d.allowed) return err;
  const seconds = Math.max(1, Math.ceil(d.retryAfterMs / 1000));
  return new ApiError('RATE_LIMITED', {
    message:
      `Too many failed authentications from this address: wait ${seconds} s (Retry-After), then send a valid ` +
      `API key of your workspace as "Authorization: Bearer <API_KEY>".`,
    metadata: { reason: 'authentication-failures', limit: d.limit, retryAfterSeconds: seconds },
    headers: { 'retry-after': String(seconds) },
  });
}

/** Runs `chargeFailure` for an UNAUTHORIZED error, passing any other error through; never rejects. */
export function failed(
  failures: RateLimiter | undefined,
  req: FastifyRequest,
  err: unknown,
  done: (err?: Error) => void,
): void {
  if (!(err instanceof ApiError) || err.errorName !== 'UNAUTHORIZED') return done(err as Error);
  // An outage of the failure counters must not turn a 401 into a 500.
  chargeFailure(failures, req, err).then(done, () => done(err));
}
