// The worker's side of the internal worker API transport: one call tried across several service
// instances (failover), retried with back-off while none answers. It knows HTTP and the error
// body, not jobs: remote-jobs.ts builds the job store on it.
import type { z } from 'zod';
import { ErrorBody } from '../../shared/api/error-body.js';

export interface WorkerApiClientOptions {
  /**
   * Base URLs of the service instances, e.g. `http://render-1:8420` (the worker API path is
   * appended). Tried in order; the one that last answered is tried first. At least one.
   */
  serviceUrls: readonly string[];
  /**
   * This worker's token (renderbridge admin create-worker-token), or the deprecated
   * farm-wide one. Required; never logged.
   */
  token: string;
  /** Limit of one request, from connect to the end of the body. Default 10000 ms. */
  timeoutMs?: number;
  /**
   * How long one call keeps trying while no service URL answers (connection errors, timeouts,
   * 5xx), so a restart or the death of one instance does not fail the task. Default 30000 ms.
   */
  retryForMs?: number;
  /** First pause between rounds over all URLs; doubles up to 2000 ms. Default 200 ms. */
  retryDelayMs?: number;
  /** Injected for tests. Default: the global fetch. */
  fetch?: typeof fetch;
}

/** An answer that ends the call: 2xx, or a 4xx (never retried: asking again changes nothing). */
export interface WorkerApiAnswer {
  status: number;
  /** Parsed JSON, or undefined for an empty body. */
  body: unknown;
  /** The URL that answered, without credentials (for messages). */
  url: string;
  /**
   * True when an earlier attempt of this call may have reached a service and been applied
   * before its answer was lost (a timeout, a dropped connection, a 5xx).
   */
  uncertain: boolean;
}

/** Thrown when a service refused a call (4xx) or answered something that is not the worker API. */
export class WorkerApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly errorName: string | null,
  ) {
    super(message);
    this.name = 'WorkerApiError';
  }
}

const MAX_DELAY_MS = 2000;

/** A base URL as shown in messages: no user, password, query or fragment. */
export function displayUrl(raw: string): string {
  const u = new URL(raw);
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}

/** What went wrong on one attempt, for the final message. */
function describe(err: unknown): { text: string; refused: boolean } {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return { text: 'timed out', refused: false };
  const code = e.cause?.code;
  return {
    text: code ? `${code}${e.cause?.message ? `: ${e.cause.message}` : ''}` : String(e.message ?? err),
    refused: code === 'ECONNREFUSED',
  };
}

export class WorkerApiClient {
  private readonly bases: { url: string; shown: string }[];
  private readonly token: string;
  private readonly timeoutMs: number;
  private readonly retryForMs: number;
  private readonly retryDelayMs: number;
  private readonly fetch: typeof fetch;
  /** Index of the URL that answered last: tried first next time. */
  private preferred = 0;

  constructor(opts: WorkerApiClientOptions) {
    if (opts.serviceUrls.length === 0)
      throw new Error('worker API: no service URL given: pass the URL of at least one renderbridge service');
    this.bases = opts.serviceUrls.map((raw) => {
      let u: URL;
      try {
        u = new URL(raw);
      } catch {
        throw new Error(
          `worker API: "${raw.replace(/\/\/[^@/]*@/, '//')}" is not a URL: give service URLs like http://render-1:8420`,
        );
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:')
        throw new Error(`worker API: ${displayUrl(raw)} is not an http(s) URL`);
      return { url: raw.replace(/\/+$/, ''), shown: displayUrl(raw) };
    });
    if (!opts.token)
      throw new Error(
        "worker API: the worker token is empty: set RENDERBRIDGE_WORKER_TOKEN to this worker's token " +
          '(renderbridge admin create-worker-token --name NAME)',
      );
    this.token = opts.token;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.retryForMs = opts.retryForMs ?? 30_000;
    this.retryDelayMs = opts.retryDelayMs ?? 200;
    this.fetch = opts.fetch ?? globalThis.fetch;
  }

  /**
   * Sends one call (`path` includes the worker API prefix) until a service answers it with a
   * 2xx or 4xx. Throws when none did within retryForMs.
   */
  async call(method: string, path: string, body?: unknown): Promise<WorkerApiAnswer> {
    const deadline = Date.now() + this.retryForMs;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const failures = new Map<string, string>();
    let uncertain = false;
    for (let round = 0; ; round++) {
      let retryAfterMs = 0;
      for (let i = 0; i < this.bases.length; i++) {
        const index = (this.preferred + i) % this.bases.length;
        const base = this.bases[index]!;
        const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'application/json' };
        if (payload !== undefined) headers['content-type'] = 'application/json';
        try {
          const signal = AbortSignal.timeout(this.timeoutMs);
          const res = await this.fetch(`${base.url}${path}`, {
            method,
            headers,
            signal,
            ...(payload !== undefined ? { body: payload } : {}),
          });
          const text = await res.text();
          if (res.status === 429) {
            // Over this token's budget on that instance: nothing was applied; wait as told, then try again.
            failures.set(base.shown, 'HTTP 429 RATE_LIMITED');
            retryAfterMs = Math.max(retryAfterMs, 1000 * (Number(res.headers.get('retry-after')) || 1));
            continue;
          }
          if (res.status >= 500) {
            failures.set(base.shown, `HTTP ${res.status}${errorName(text)}`);
            uncertain = true;
            continue;
          }
          this.preferred = index;
          return { status: res.status, body: parseJson(text, base.shown, method, path), url: base.shown, uncertain };
        } catch (err) {
          if (err instanceof WorkerApiError) throw err;
          const d = describe(err);
          failures.set(base.shown, d.text);
          // A refused connection never reached a service; anything else may have been applied.
          if (!d.refused) uncertain = true;
        }
      }
      const pause = Math.min(
        Math.max(retryAfterMs, Math.min(MAX_DELAY_MS, this.retryDelayMs * 2 ** round)),
        deadline - Date.now(),
      );
      if (pause <= 0) break;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
    const tried = [...failures].map(([url, why]) => `${url} (${why})`).join('; ');
    throw new WorkerApiError(
      `worker API: ${method} ${path} got no answer from any service URL within ` +
        `${Math.round(this.retryForMs / 1000)} s: ${tried}. Check that these URLs are the service's worker API ` +
        '(its own --worker-api-port when it has one) and reachable from this worker.',
      null,
      null,
    );
  }

  /** The error for a 4xx answer: what the service said, and what to check. */
  refusal(answer: WorkerApiAnswer, method: string, path: string): WorkerApiError {
    const parsed = ErrorBody.safeParse(answer.body);
    const name = parsed.success ? parsed.data.name : null;
    const at = `${answer.url} refused ${method} ${path} with ${answer.status}${name ? ` ${name}` : ''}`;
    if (answer.status === 401) {
      return new WorkerApiError(
        `${at}: the worker token is unknown or revoked; create this worker's own token with renderbridge ` +
          `admin create-worker-token --name NAME on the service and set it as RENDERBRIDGE_WORKER_TOKEN here.`,
        401,
        name,
      );
    }
    if (name === 'ROUTE_NOT_FOUND') {
      return new WorkerApiError(
        `${at}: this URL serves no worker API; if the service has one of its own (--worker-api-port), give ` +
          `that address as --service-url, and run the same renderbridge version on service and workers.`,
        answer.status,
        name,
      );
    }
    const details =
      parsed.success && parsed.data.details.length
        ? ` (${parsed.data.details.map((d) => `${d.path.join('.')}: ${d.message}`).join('; ')})`
        : '';
    const message = parsed.success ? parsed.data.message : JSON.stringify(answer.body)?.slice(0, 200);
    return new WorkerApiError(`${at}: ${message}${details}`, answer.status, name);
  }

  /** The answer's body as `schema` says; a body of another shape means service and worker differ in version. */
  parse<S extends z.ZodType>(answer: WorkerApiAnswer, method: string, path: string, schema: S): z.infer<S> {
    const parsed = schema.safeParse(answer.body);
    if (parsed.success) return parsed.data;
    const first = parsed.error.issues[0];
    throw new WorkerApiError(
      `${answer.url} answered ${method} ${path} with ${answer.status} and an unexpected body ` +
        `(${first ? `${first.path.join('.')}: ${first.message}` : 'invalid'}): run the same renderbridge ` +
        `version on service and workers.`,
      answer.status,
      null,
    );
  }
}

function errorName(text: string): string {
  try {
    const parsed = ErrorBody.safeParse(JSON.parse(text));
    return parsed.success ? ` ${parsed.data.name}` : '';
  } catch {
    return '';
  }
}

function parseJson(text: string, url: string, method: string, path: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new WorkerApiError(
      `${url} answered ${method} ${path} with a body that is not JSON: check that this URL points at the ` +
        `renderbridge service, not a proxy's error page.`,
      null,
      null,
    );
  }
}
