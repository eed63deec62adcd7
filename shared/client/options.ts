// Client options, their documented defaults, and their checks.
import { API_PREFIX } from '../constants.js';

export interface RenderJobClientOptions {
  /** API root; must end with `/api/external/v1` (e.g. `https://farm.example/api/external/v1`). */
  baseUrl: string;
  /** Workspace API key, sent as `Authorization: Bearer <apiKey>` on every API call. */
  apiKey: string;
  /** fetch implementation. Default: the global `fetch`. */
  fetch?: typeof fetch;
  /**
   * Retries after the first attempt. A 429 is retried for every method (the server rejected it
   * before doing anything); 502/503/504 and network errors only for GET. `uploadProject` also
   * sends its PUT again up to this many times after a network error. Default: 5.
   */
  maxRetries?: number;
  /** Ceiling of the first back-off delay, doubled per retry (full jitter). Default: 500. */
  baseDelayMs?: number;
  /** Longest single back-off delay, Retry-After included. Default: 30000. */
  maxDelayMs?: number;
  /**
   * Time limit of one attempt, answer body included; for `uploadFile`, the longest the socket may
   * stay idle. Default: 30000.
   */
  requestTimeoutMs?: number;
  /** User-Agent header of every request. Default: `renderbridge-client`. */
  userAgent?: string;
  /**
   * How long a broken connection may stay broken, ms: once the service has answered this client,
   * a call that lost its connection (reset, refused, unreachable, timed out) is tried again, every
   * second or two, until this much time has passed since the first failure, even past
   * `maxRetries`, so a submission survives a link that drops and comes back. A service that never
   * answered is given up after `maxRetries`. Calls whose repeat could do harm recover by reading the state they
   * would have made instead (see `validateJob`, `cancelJob`). 0: `maxRetries` alone. Default: 120000.
   */
  reconnectPatienceMs?: number;
  /** Told when a call's connection came back after failing (how long it was down). Default: nothing. */
  onReconnect?: (info: { method: string; path: string; downMs: number }) => void;
}

export type ResolvedOptions = Required<Omit<RenderJobClientOptions, 'onReconnect'>> &
  Pick<RenderJobClientOptions, 'onReconnect'>;

export const DEFAULT_OPTIONS = {
  maxRetries: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  requestTimeoutMs: 30_000,
  userAgent: 'renderbridge-client',
  reconnectPatienceMs: 120_000,
} as const;

export function resolveOptions(options: RenderJobClientOptions): ResolvedOptions {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new TypeError(`baseUrl is not a URL: ${options.baseUrl}`);
  }
  if (!/^https?:$/.test(parsed.protocol) || !parsed.pathname.endsWith(API_PREFIX)) {
    throw new TypeError(`baseUrl must be an http(s) URL ending with ${API_PREFIX}, got ${options.baseUrl}`);
  }
  if (!options.apiKey) throw new TypeError('apiKey is required');
  const resolved: ResolvedOptions = {
    baseUrl,
    apiKey: options.apiKey,
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    maxRetries: options.maxRetries ?? DEFAULT_OPTIONS.maxRetries,
    baseDelayMs: options.baseDelayMs ?? DEFAULT_OPTIONS.baseDelayMs,
    maxDelayMs: options.maxDelayMs ?? DEFAULT_OPTIONS.maxDelayMs,
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_OPTIONS.requestTimeoutMs,
    userAgent: options.userAgent ?? DEFAULT_OPTIONS.userAgent,
    reconnectPatienceMs: options.reconnectPatienceMs ?? DEFAULT_OPTIONS.reconnectPatienceMs,
    ...(options.onReconnect ? { onReconnect: options.onReconnect } : {}),
  };
  for (const key of ['maxRetries', 'baseDelayMs', 'maxDelayMs', 'requestTimeoutMs', 'reconnectPatienceMs'] as const) {
    const v = resolved[key];
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`${key} must be a finite number >= 0, got ${v}`);
  }
  // A zero timeout would abort every request before it is sent.
  if (resolved.requestTimeoutMs === 0) throw new RangeError('requestTimeoutMs must be > 0');
  return resolved;
}
