// The typed client of the bridge daemon's local API (DAEMON_ROUTES, documented in
// shared/daemon/openapi.json): one method per route, bodies typed from the route's schema, answers
// parsed with it. Every request carries `Authorization: Bearer <token>` and no Origin header. A
// non-2xx answer throws DaemonClientError with the daemon's (or the service's) error body; no
// answer, or one off the contract, throws it too, named from DAEMON_CLIENT_ERRORS.
import type { z } from 'zod';
import { ErrorBody } from '../api/error-body.js';
import { DAEMON_ROUTES, type DaemonRouteName } from './api.js';

/** Failures found on the client's side (no daemon answer to read the error from). */
export const DAEMON_CLIENT_ERRORS = {
  DAEMON_UNREACHABLE: {
    message:
      "Nothing answered at the daemon's address: start it with `renderbridge daemon` (or the tray app) and try again.",
  },
  DAEMON_TIMEOUT: {
    message: 'The daemon did not answer in time: it may be busy; try again, or restart it with `renderbridge daemon`.',
  },
  DAEMON_BAD_RESPONSE: {
    message:
      'The daemon answered with a body off its API contract: check that the address is a renderbridge daemon ' +
      'of the same version.',
  },
} as const;
export type DaemonClientErrorName = keyof typeof DAEMON_CLIENT_ERRORS;

/**
 * A failed call. `status` is the HTTP status, 0 when no answer came; `body` the error body (name, message, details).
 */
export class DaemonClientError extends Error {
  override readonly name = 'DaemonClientError';
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.message);
  }

  /** The error's registry name (the daemon's, the service's, or one of DAEMON_CLIENT_ERRORS). */
  get code(): string {
    return this.body.name;
  }
}

function clientError(name: DaemonClientErrorName, reason: string, status = 0): DaemonClientError {
  return new DaemonClientError(status, {
    name,
    message: `${DAEMON_CLIENT_ERRORS[name].message} (${reason})`,
    details: [],
    type: 'api',
    metadata: { reason },
  });
}

export interface DaemonClientOptions {
  /** `http://127.0.0.1:<port>` (the state file's port). */
  origin: string;
  /** The daemon's access token (the state file's `token`). */
  token: string;
  /** fetch implementation. Default: the global fetch. */
  fetch?: typeof fetch;
  /**
   * Time limit of each call until its answer is read, in ms. Default 30000; POST /pack has none (packing takes as long
   * as it takes) unless given.
   */
  timeoutMs?: number;
}

type Route<K extends DaemonRouteName> = (typeof DAEMON_ROUTES)[K];
type Answer<K extends DaemonRouteName> = z.output<Route<K>['response']>;
type BodyOf<K extends DaemonRouteName> = Route<K> extends { body: z.ZodType } ? z.input<Route<K>['body']> : never;

interface CallOptions {
  /** Replaces `:id` in the route's path. */
  id?: string;
  body?: unknown;
  signal?: AbortSignal;
  /** Overrides the client's timeoutMs; null: no limit. */
  timeoutMs?: number | null;
}

export class DaemonClient {
  private readonly doFetch: typeof fetch;
  readonly origin: string;

  constructor(private readonly options: DaemonClientOptions) {
    this.doFetch = options.fetch ?? fetch;
    this.origin = options.origin.replace(/\/+$/, '');
  }

  /** GET /health: version, and whether an API key is configured. */
  health(signal?: AbortSignal): Promise<Answer<'health'>> {
    return this.call('health', { signal });
  }

  /**
   * POST /pack: packs a .blend, a folder or a .zip while the call waits (no time limit unless the client's timeoutMs
   * was given). Prefer startPack.
   */
  pack(body: BodyOf<'pack'>, signal?: AbortSignal): Promise<Answer<'pack'>> {
    return this.call('pack', { body, signal, timeoutMs: this.options.timeoutMs ?? null });
  }

  /**
   * POST /packs: starts packing in the background; answers its first state (202). Follow it
   * with getPack or the `pack` event.
   */
  startPack(body: BodyOf<'startPack'>, signal?: AbortSignal): Promise<Answer<'startPack'>> {
    return this.call('startPack', { body, signal });
  }

  /** GET /packs/:id: a background pack's phase, progress (bytes, rate, ETA), then its result or error. */
  getPack(id: string, signal?: AbortSignal): Promise<Answer<'getPack'>> {
    return this.call('getPack', { id, signal });
  }

  /** POST /submissions: starts a submission; answers its first state (202). */
  submit(body: BodyOf<'submit'>, signal?: AbortSignal): Promise<Answer<'submit'>> {
    return this.call('submit', { body, signal });
  }

  listSubmissions(signal?: AbortSignal): Promise<Answer<'listSubmissions'>> {
    return this.call('listSubmissions', { signal });
  }

  getSubmission(id: string, signal?: AbortSignal): Promise<Answer<'getSubmission'>> {
    return this.call('getSubmission', { id, signal });
  }

  /** GET /jobs: the jobs as the daemon last saw them. */
  listJobs(signal?: AbortSignal): Promise<Answer<'listJobs'>> {
    return this.call('listJobs', { signal });
  }

  getJob(id: string, signal?: AbortSignal): Promise<Answer<'getJob'>> {
    return this.call('getJob', { id, signal });
  }

  cancelJob(id: string, signal?: AbortSignal): Promise<Answer<'cancelJob'>> {
    return this.call('cancelJob', { id, signal });
  }

  /** POST /jobs/:id/priority (service extension scheduling): the job's new priority, 0-100. */
  setJobPriority(id: string, priority: number, signal?: AbortSignal): Promise<Answer<'setJobPriority'>> {
    return this.call('setJobPriority', { id, body: { priority }, signal });
  }

  /** POST /jobs/:id/pause: no new frame of the job starts until resume. */
  pauseJob(id: string, signal?: AbortSignal): Promise<Answer<'pauseJob'>> {
    return this.call('pauseJob', { id, signal });
  }

  resumeJob(id: string, signal?: AbortSignal): Promise<Answer<'resumeJob'>> {
    return this.call('resumeJob', { id, signal });
  }

  /** POST /jobs/:id/approve-previews: "go" for the frames after the previews of a gated render. */
  approvePreviews(id: string, signal?: AbortSignal): Promise<Answer<'approvePreviews'>> {
    return this.call('approvePreviews', { id, signal });
  }

  /** POST /jobs/:id/download: starts downloading the outputs (into `body.outDir`, default the daemon's folder). */
  downloadJob(id: string, body: BodyOf<'downloadJob'> = {}, signal?: AbortSignal): Promise<Answer<'downloadJob'>> {
    return this.call('downloadJob', { id, body, signal });
  }

  /**
   * GET /events: the open Server-Sent Events stream (read it with parseEventFrames from
   * client-events.ts). No time limit: it ends when `signal` aborts or the daemon goes away.
   */
  async openEvents(signal?: AbortSignal): Promise<Response> {
    const res = await this.send('events', { signal, timeoutMs: null }, { accept: 'text/event-stream' });
    if (res.status !== DAEMON_ROUTES.events.status || !res.body) throw await this.failure(res);
    return res;
  }

  /** The URL of a route (with `id` in place of `:id`). */
  url(name: DaemonRouteName, id?: string): string {
    const path = DAEMON_ROUTES[name].path.replace(':id', () => encodeURIComponent(id ?? ''));
    return `${this.origin}${path}`;
  }

  private async call<K extends DaemonRouteName>(name: K, o: CallOptions): Promise<Answer<K>> {
    const route = DAEMON_ROUTES[name];
    const res = await this.send(name, o, { accept: 'application/json' });
    if (res.status !== route.status) throw await this.failure(res);
    const text = await res.text().catch((err: unknown) => {
      throw clientError('DAEMON_UNREACHABLE', `the answer to ${route.method} ${route.path} broke off: ${String(err)}`);
    });
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw clientError(
        'DAEMON_BAD_RESPONSE',
        `${route.method} ${route.path} answered ${res.status} with a body that is not JSON`,
        res.status,
      );
    }
    const parsed = route.response.safeParse(json);
    if (!parsed.success)
      throw clientError('DAEMON_BAD_RESPONSE', `${route.method} ${route.path}: ${parsed.error.message}`, res.status);
    return parsed.data as Answer<K>;
  }

  private async send(name: DaemonRouteName, o: CallOptions, headers: Record<string, string>): Promise<Response> {
    const route = DAEMON_ROUTES[name];
    const limit = o.timeoutMs === undefined ? (this.options.timeoutMs ?? 30_000) : o.timeoutMs;
    const signals = [o.signal, limit === null ? undefined : AbortSignal.timeout(limit)].filter(
      (s): s is AbortSignal => s !== undefined,
    );
    const init: RequestInit = {
      method: route.method,
      headers: {
        ...headers,
        authorization: `Bearer ${this.options.token}`,
        ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
      ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}),
    };
    try {
      return await this.doFetch(this.url(name, o.id), init);
    } catch (err) {
      if (o.signal?.aborted) throw err;
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      const reason = `${route.method} ${route.path}: ${err instanceof Error ? err.message : String(err)}`;
      throw clientError(timedOut ? 'DAEMON_TIMEOUT' : 'DAEMON_UNREACHABLE', reason);
    }
  }

  /** The DaemonClientError of a non-success answer: its error body, or DAEMON_BAD_RESPONSE when it has none. */
  private async failure(res: Response): Promise<DaemonClientError> {
    const text = await res.text().catch(() => '');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const parsed = ErrorBody.safeParse(body);
    if (parsed.success) return new DaemonClientError(res.status, parsed.data);
    return clientError('DAEMON_BAD_RESPONSE', `HTTP ${res.status} without an error body`, res.status);
  }
}
