// The daemon's front door, run before anything else on every request:
// 1. an `Origin` header other than the daemon's own (`http://127.0.0.1:<port>` or
//    `http://localhost:<port>`, the job window at /ui/) is refused (403): browsers send it on
//    cross-origin requests, so no other web page can drive the daemon (no CSRF);
// 2. a `Host` other than 127.0.0.1 or localhost (with the daemon's port, or none) is refused (403):
//    a DNS-rebinding page reaches 127.0.0.1 under its own host name;
// 3. `Authorization: Bearer <token>` must carry the daemon's token (401), compared in constant time;
//    only GET/HEAD of the job window's static files (`assetPrefix`, no data in them) skip it.
// The webhook receiver skips 2 and 3: it is authenticated by its HMAC signature instead, and the
// service may reach it through a tunnel under another host name.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DaemonError } from '../errors.js';

export interface GuardOptions {
  /** The daemon's access token. */
  token: string;
  /** The port the daemon listens on, once known (undefined: any port is accepted in `Host`). */
  port: () => number | undefined;
  /** Paths authenticated otherwise (the webhook receiver). Default none. */
  publicPaths?: readonly string[];
  /**
   * Path prefix of static files served without the token (GET/HEAD only; Origin and Host still checked). Default none.
   */
  assetPrefix?: string;
}

const LOCAL_HOST = /^(?:127\.0\.0\.1|localhost)(?::(\d{1,5}))?$/i;

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** True when `Host` names this machine's loopback address (and the daemon's port, when it has one). */
export function isLocalHost(host: string | undefined, port: number | undefined): boolean {
  if (!host) return false;
  const m = LOCAL_HOST.exec(host.trim());
  if (!m) return false;
  return m[1] === undefined || port === undefined || Number(m[1]) === port;
}

/** Constant-time check of an `Authorization` header against the token (hashes first, so lengths never leak). */
export function hasToken(authorization: string | undefined, token: string): boolean {
  const m = authorization ? /^Bearer[ ]+(\S+)\s*$/i.exec(authorization) : null;
  const given = digest(m?.[1] ?? '');
  const ok = timingSafeEqual(given, digest(token));
  return ok && m !== null;
}

/** True when `Origin` is the daemon's own origin: http, 127.0.0.1 or localhost, and its port (which must be known). */
export function isSelfOrigin(origin: string, port: number | undefined): boolean {
  if (port === undefined) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (
    url.protocol === 'http:' &&
    (url.hostname === '127.0.0.1' || url.hostname === 'localhost') &&
    url.port === String(port) &&
    url.origin === origin.toLowerCase()
  );
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

export function makeGuard(options: GuardOptions) {
  const publicPaths = new Set(options.publicPaths ?? []);
  const prefix = options.assetPrefix;
  const isAsset = (req: FastifyRequest, p: string): boolean =>
    prefix !== undefined &&
    (req.method === 'GET' || req.method === 'HEAD') &&
    (p === prefix || p.startsWith(`${prefix}/`));
  return async function guard(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const origin = req.headers.origin;
    if (origin !== undefined && !isSelfOrigin(origin, options.port())) {
      throw new DaemonError('DAEMON_FORBIDDEN_ORIGIN', undefined, { reason: 'origin' });
    }
    const p = pathOf(req.url);
    if (publicPaths.has(p)) return;
    if (!isLocalHost(req.headers.host, options.port())) {
      throw new DaemonError('DAEMON_FORBIDDEN_ORIGIN', undefined, { reason: 'host' });
    }
    if (isAsset(req, p)) return;
    if (!hasToken(req.headers.authorization, options.token)) throw new DaemonError('DAEMON_UNAUTHORIZED');
  };
}
