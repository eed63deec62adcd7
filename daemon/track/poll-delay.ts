// How long the job tracker (tracker.ts) waits after a poll failed: a 429's Retry-After, the idle
// interval while no API key is set, else a back-off that doubles per failure.
import { ApiError } from '../../shared/client/errors.js';
import { DaemonError } from '../errors.js';
import type { TrackerLogger } from './tracker.js';

/**
 * How long to wait after a failed poll: the Retry-After of a 429 (not shortened by kick()),
 * the idle interval while no API key is configured, else pollActiveMs doubled per consecutive
 * failure up to maxBackoffMs.
 */
export function pollDelay(
  err: unknown,
  failures: number,
  opts: { pollActiveMs: number; pollIdleMs: number; maxBackoffMs: number },
  logger?: TrackerLogger,
): { ms: number; kickable: boolean } {
  if (err instanceof DaemonError && err.code === 'NO_API_KEY') {
    return { ms: opts.pollIdleMs, kickable: true };
  }
  const backoff = Math.min(opts.maxBackoffMs, Math.max(opts.pollActiveMs, 250) * 2 ** Math.max(0, failures - 1));
  if (err instanceof ApiError && err.status === 429) {
    const ms = err.retryAfterMs ?? backoff;
    logger?.warn({ retryAfterMs: ms }, 'the service rate-limits this key: waiting before the next poll');
    return { ms, kickable: false };
  }
  const message = err instanceof Error ? err.message : String(err);
  logger?.warn({ err: message, failures, retryInMs: backoff }, 'polling the service failed');
  return { ms: backoff, kickable: true };
}
