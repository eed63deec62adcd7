// Authentication by dashboard session cookie, the alternative to a Bearer key: the session must
// exist, be neither idle nor past its absolute expiry, and its API key must not be revoked; a
// request that can change state must carry the session's CSRF token in X-CSRF-Token.
import type { FastifyRequest } from 'fastify';
import { csrfMatches, hashSessionId, sessionEnded, TOUCH_EVERY_MS, type SessionLifetime } from '../domain/sessions.js';
import type { FoundSession, SessionStore } from '../ports/sessions.js';
import { ApiError } from './api-error.js';
import { readSessionCookie, type SessionCookie } from './session-cookie.js';

export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The session a request was authenticated with. */
export interface RequestSession {
  /** The id from the cookie (never logged: no header is). */
  id: string;
  found: FoundSession;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request was authenticated by a dashboard session cookie rather than a key. */
    dashboardSession?: RequestSession;
  }
}

export interface SessionAuthDeps {
  store: SessionStore;
  life: SessionLifetime;
  cookie: SessionCookie;
  /** Clock in epoch ms. Default Date.now (tests move it). */
  now?: () => number;
}

export class SessionAuth {
  readonly now: () => number;

  constructor(readonly deps: SessionAuthDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** The session id the request's cookie carries, if any. */
  idOf(req: FastifyRequest): string | undefined {
    return readSessionCookie(req, this.deps.cookie.name);
  }

  /**
   * The live session behind `id`, or an UNAUTHORIZED error saying why not (`metadata.session`:
   * unknown, idle, expired or revoked, so the dashboard can tell the person). An ended session's
   * row is deleted on the way.
   */
  async check(req: FastifyRequest, id: string): Promise<RequestSession> {
    const idHash = hashSessionId(id);
    const found = await this.deps.store.find(idHash);
    const now = this.now();
    const ended = found ? sessionEnded(found, now, this.deps.life) : 'unknown';
    if (ended) {
      if (found) await this.deps.store.delete(idHash);
      throw new ApiError('UNAUTHORIZED', { metadata: { session: ended } });
    }
    const live = found!;
    if (!SAFE_METHODS.has(req.method)) {
      const sent = req.headers[CSRF_HEADER];
      if (!csrfMatches(id, typeof sent === 'string' ? sent : undefined)) throw new ApiError('CSRF_TOKEN_INVALID');
    }
    // A quarter of the idle time at most, so a short idle limit is not reached between two writes.
    if (now - live.lastSeenAt >= Math.min(TOUCH_EVERY_MS, this.deps.life.idleMs / 4)) {
      await this.deps.store.touch(idHash, now);
      live.lastSeenAt = now;
    }
    return { id, found: live };
  }

  /**
   * Whether the session still authenticates, without counting as activity (a long event stream must not keep it alive).
   */
  async alive(id: string): Promise<boolean> {
    const found = await this.deps.store.find(hashSessionId(id));
    return !!found && !sessionEnded(found, this.now(), this.deps.life);
  }
}
