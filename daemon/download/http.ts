// One GET or HEAD to a signed download URL with node:http(s): no decompression (sizes are the
// file's bytes), an idle timeout, and errors that never show the URL's query (its signature).
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { ApiError, NetworkError, errorBodyFrom } from '../../shared/client/errors.js';
import { readSmallBody } from '../../shared/client/small-body.js';

export interface HttpOptions {
  method?: 'GET' | 'HEAD';
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Longest the connection may stay silent. Default 30000 ms. */
  idleTimeoutMs?: number;
  /** User-Agent header. Default `renderbridge-daemon`. */
  userAgent?: string;
}

/** The URL without its query: signed URLs must not reach logs or error messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return url.split(/[?#]/)[0] ?? '';
  }
}

/**
 * Sends the request and resolves with the answer's head (the body not read yet) for a 2xx or a
 * 416; throws ApiError with the parsed error body for other statuses, NetworkError when no answer
 * came, and the signal's reason on abort.
 */
export async function openUrl(url: string, options: HttpOptions = {}): Promise<IncomingMessage> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new TypeError(`download URL must be http(s): ${redactUrl(url)}`);
  const method = options.method ?? 'GET';
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  options.signal?.throwIfAborted();
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = (target.protocol === 'https:' ? https : http).request(target, {
      method,
      headers: {
        'user-agent': options.userAgent ?? 'renderbridge-daemon',
        'accept-encoding': 'identity',
        ...options.headers,
      },
      signal: options.signal,
    });
    let timedOut = false;
    req.setTimeout(idleTimeoutMs, () => {
      timedOut = true;
      req.destroy(new Error(`no activity for ${idleTimeoutMs} ms`));
    });
    req.once('error', (err) => {
      if (options.signal?.aborted) reject(options.signal.reason);
      else reject(new NetworkError(method, redactUrl(url), err, timedOut));
    });
    req.once('response', resolve);
    req.end();
  });
  const status = response.statusCode ?? 0;
  if ((status >= 200 && status < 300) || status === 416) return response;
  const text = await readSmallBody(response).catch(() => '');
  const body = errorBodyFrom(status, response.statusMessage ?? '', text, response.headers['content-type'] ?? null);
  const retryAfter = Number(response.headers['retry-after']);
  throw new ApiError(method, redactUrl(url), status, body, Number.isFinite(retryAfter) ? retryAfter * 1000 : undefined);
}

/** `Content-Range: bytes START-END/TOTAL` (or `bytes * /TOTAL` of a 416); null when unreadable. */
export function parseContentRange(
  value: string | undefined,
): { start: number | null; end: number | null; total: number | null } | null {
  if (!value) return null;
  const m = /^bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)$/i.exec(value.trim());
  if (!m) return null;
  return {
    start: m[1] === undefined ? null : Number(m[1]),
    end: m[2] === undefined ? null : Number(m[2]),
    total: m[3] === '*' || m[3] === undefined ? null : Number(m[3]),
  };
}

/** Content-Length as a number; null when absent or not a number. */
export function contentLength(response: IncomingMessage): number | null {
  const v = response.headers['content-length'];
  if (v === undefined || !/^\d+$/.test(v)) return null;
  return Number(v);
}
