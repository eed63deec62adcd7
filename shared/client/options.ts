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
}

export type ResolvedOptions = Required<RenderJobClientOptions>;

export const DEFAULT_OPTIONS = {
  maxRetries: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  requestTimeoutMs: 30_000,
  userAgent: 'renderbridge-client',
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
  };
  for (const key of ['maxRetries', 'baseDelayMs', 'maxDelayMs', 'requestTimeoutMs'] as const) {
    const v = resolved[key];
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`${key} must be a finite number >= 0, got ${v}`);
  }
  // A zero timeout would abort every request before it is sent.
  if (resolved.requestTimeoutMs === 0) throw new RangeError('requestTimeoutMs must be > 0');
  return resolved;
}
