// Calls whose repeat could do harm (a second validate is refused, a second cancel of a canceled
// job is a 409), made to survive a lost connection: the answer may be lost after the service
// acted, so the client reads the state the call would have made before it sends the call again.
import { sleep } from './backoff.js';
import { NetworkError } from './errors.js';

/** Pause before a call that did not reach the service is sent again. */
const RESEND_DELAY_MS = 1000;

export interface RecoverOptions {
  /** Give up (with the last NetworkError) once this long has passed since the first try, ms. */
  patienceMs: number;
  /** Whether the service has ever answered this client: one that never did is not waited for. */
  answered: () => boolean;
  signal?: AbortSignal | undefined;
}

/**
 * `send`, and after each lost connection `received()`: the state the call would have made, read
 * through GETs (which the transport retries patiently), or undefined when the call did not reach
 * the service. A received call answers that state; one that was not is sent again.
 */
export async function sendOnce<T>(
  send: () => Promise<T>,
  received: () => Promise<T | undefined>,
  o: RecoverOptions,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    try {
      return await send();
    } catch (err) {
      if (!(err instanceof NetworkError) || o.signal?.aborted) throw err;
      const found = await received();
      if (found !== undefined) return found;
      if (!o.answered() || Date.now() - started >= o.patienceMs) throw err;
      // Not received: wait a moment, so a link that refuses at once is not hammered.
      await sleep(RESEND_DELAY_MS, o.signal);
    }
  }
}
