// Retry timing: exponential back-off with full jitter, floored by the server's Retry-After.

export interface BackoffOptions {
  /** Ceiling of the first delay; doubled per attempt. */
  readonly baseDelayMs: number;
  /** No delay, not even a Retry-After one, is longer than this. */
  readonly maxDelayMs: number;
}

/**
 * Milliseconds a `Retry-After` header asks to wait: delta-seconds (`"120"`) or an HTTP-date.
 * Undefined when absent or unreadable; a date in the past gives 0.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value == null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only accept something that looks like a date: Date.parse is lenient with short strings.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * Delay before retry number `attempt + 1` (attempt counts from 0): a uniformly random value in
 * [0, min(maxDelayMs, baseDelayMs * 2^attempt)] ("full jitter", so many clients rejected together
 * do not come back together), but never shorter than what the server asked for with Retry-After.
 * The result is capped at maxDelayMs so a hostile or mistaken header cannot stall the caller;
 * retrying early at worst costs one more 429.
 */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** attempt);
  const jittered = Math.floor(random() * ceiling);
  return Math.min(options.maxDelayMs, Math.max(jittered, retryAfterMs ?? 0));
}

/** Longest pause between two tries of a lost connection, so a link that comes back is used soon. */
export const RECONNECT_MAX_DELAY_MS = 2000;

/**
 * The retry rule of a lost connection: counted tries first, then, for a connection lost less
 * than `patienceMs` ago, more tries paced at most RECONNECT_MAX_DELAY_MS apart. Call `failed`
 * after each failure: it answers the pause before the next try, or undefined to give up.
 */
export class ReconnectBudget {
  private lostAt: number | undefined;

  constructor(private readonly o: BackoffOptions & { maxRetries: number; patienceMs: number }) {}

  failed(retries: number, lostConnection: boolean, retryAfterMs?: number): number | undefined {
    if (!lostConnection) this.lostAt = undefined;
    else this.lostAt ??= Date.now();
    const patient = this.lostAt !== undefined && Date.now() - this.lostAt < this.o.patienceMs;
    if (retries >= this.o.maxRetries && !patient) return undefined;
    const delay = backoffDelay(retries, this.o, retryAfterMs);
    return lostConnection ? Math.min(delay, RECONNECT_MAX_DELAY_MS) : delay;
  }
}

/** Resolves after `ms`; rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
