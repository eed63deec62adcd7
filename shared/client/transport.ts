// One API call: URL, auth and JSON handling, per-attempt timeout, and the retry policy.
import { backoffDelay, parseRetryAfter, RECONNECT_MAX_DELAY_MS, sleep } from './backoff.js';
import { ApiError, NetworkError, errorBodyFrom } from './errors.js';
import type { ResolvedOptions } from './options.js';

export interface ApiRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path below the base URL, parameters already filled in. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  /** JSON body; undefined sends no body and no Content-Type. */
  readonly body?: unknown;
  readonly signal?: AbortSignal;
  /** The route's `retrySafe`: a network error is retried as for a GET. Default false. */
  readonly retrySafe?: boolean;
}

export interface ApiAnswer {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON, or undefined for an empty body. */
  readonly data: unknown;
  readonly url: string;
}

/** Statuses a GET may retry: the gateway or the service was briefly unable to answer. */
const TRANSIENT_STATUSES = new Set([502, 503, 504]);

type Attempt = { readonly answer: ApiAnswer; readonly error?: undefined } | { readonly error: ApiError | NetworkError };

export class Transport {
  /** When the service last answered this client (any status): its URL works. */
  private answeredAt: number | undefined;

  constructor(private readonly options: ResolvedOptions) {}

  /** Whether the service has answered this client at least once (its URL works). */
  answered(): boolean {
    return this.answeredAt !== undefined;
  }

  /**
   * Sends the request, retrying per the policy; resolves with a 2xx answer or throws. A lost
   * connection is tried again until `reconnectPatienceMs` has passed since it was lost (for
   * requests that are safe to repeat); anything else at most `maxRetries` times.
   */
  async send(request: ApiRequest): Promise<ApiAnswer> {
    const { maxRetries, reconnectPatienceMs } = this.options;
    let lostAt: number | undefined;
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt(request);
      if (!outcome.error || outcome.error instanceof ApiError) {
        this.answeredAt = Date.now();
        if (lostAt !== undefined)
          this.options.onReconnect?.({ method: request.method, path: request.path, downMs: Date.now() - lostAt });
        lostAt = undefined;
      }
      if (!outcome.error) return outcome.answer;
      const err = outcome.error;
      if (!isRetryable(request, err)) throw this.explained(err, 0);
      if (err instanceof NetworkError) {
        lostAt ??= Date.now();
        // Patience is for a connection lost, not for a service never reached: a wrong URL is
        // said after maxRetries, not after two minutes.
        const patient = this.answeredAt !== undefined && Date.now() - lostAt < reconnectPatienceMs;
        if (!patient && attempt >= maxRetries) throw this.explained(err, Date.now() - lostAt);
        await sleep(Math.min(backoffDelay(attempt, this.options), RECONNECT_MAX_DELAY_MS), request.signal);
        continue;
      }
      if (attempt >= maxRetries) throw err;
      await sleep(backoffDelay(attempt, this.options, err.retryAfterMs), request.signal);
    }
  }

  /**
   * A lost connection after the service had answered this client says so: the URL works, the
   * connection dropped. Other errors are left as they are.
   */
  explained<E extends Error>(err: E, waitedMs: number): E | NetworkError {
    if (!(err instanceof NetworkError) || err.dropped || this.answeredAt === undefined) return err;
    return new NetworkError(err.method, err.url, err.cause, err.timedOut, {
      answeredAgoMs: Date.now() - this.answeredAt,
      waitedMs,
    });
  }

  /**
   * One GET whose body is read as it arrives (a text stream that may stay open, an image): the
   * timeout covers the wait for the response head only. Not retried; a 4xx/5xx throws ApiError.
   */
  async stream(
    request: Omit<ApiRequest, 'body' | 'retrySafe'> & { accept?: string },
  ): Promise<{ url: string; body: ReadableStream<Uint8Array>; headers: Headers }> {
    const url = this.url(request.path, request.query);
    const head = new AbortController();
    const timer = setTimeout(
      () => head.abort(new Error(`no answer within ${this.options.requestTimeoutMs} ms`)),
      this.options.requestTimeoutMs,
    );
    let response: Response;
    try {
      response = await this.options.fetch(url, {
        method: request.method,
        headers: {
          authorization: `Bearer ${this.options.apiKey}`,
          accept: request.accept ?? 'text/plain, application/json',
          'user-agent': this.options.userAgent,
        },
        signal: request.signal ? AbortSignal.any([request.signal, head.signal]) : head.signal,
      });
    } catch (err) {
      if (request.signal?.aborted) throw request.signal.reason;
      throw new NetworkError(request.method, url, err, head.signal.aborted);
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok || !response.body) {
      const text = await response.text().catch(() => '');
      const body = errorBodyFrom(response.status, response.statusText, text, response.headers.get('content-type'));
      throw new ApiError(
        request.method,
        url,
        response.status,
        body,
        parseRetryAfter(response.headers.get('retry-after')),
      );
    }
    return { url, body: response.body, headers: response.headers };
  }

  url(path: string, query?: ApiRequest['query']): string {
    const url = new URL(this.options.baseUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.toString();
  }

  private async attempt(request: ApiRequest): Promise<Attempt> {
    const url = this.url(request.path, request.query);
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      accept: 'application/json',
      'user-agent': this.options.userAgent,
    };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const timeout = AbortSignal.timeout(this.options.requestTimeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    let response: Response;
    let text: string;
    try {
      response = await this.options.fetch(url, {
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal,
      });
      // Read inside the try: the timeout also covers a body that trickles in.
      text = await response.text();
    } catch (err) {
      // The caller's own abort is not a network failure: hand back its reason untouched.
      if (request.signal?.aborted) throw request.signal.reason;
      return { error: new NetworkError(request.method, url, err, timeout.aborted) };
    }
    if (response.ok)
      return { answer: { status: response.status, headers: response.headers, data: parseJson(text), url } };
    const body = errorBodyFrom(response.status, response.statusText, text, response.headers.get('content-type'));
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
    return { error: new ApiError(request.method, url, response.status, body, retryAfter) };
  }
}

function isRetryable(request: ApiRequest, error: ApiError | NetworkError): boolean {
  const safe = request.method === 'GET' || request.retrySafe === true;
  if (error instanceof ApiError) {
    // A 429 was refused before any work happened, so even a POST is safe to send again.
    if (error.status === 429) return true;
    return safe && TRANSIENT_STATUSES.has(error.status);
  }
  // A POST that hit a network error may have been applied: only routes whose repeat does no
  // harm (GET, and those marked retrySafe) are sent again.
  return safe;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    // Left to the response schema to reject, with the status and URL in the error.
    return text;
  }
}
