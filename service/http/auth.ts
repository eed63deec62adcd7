import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_PREFIX } from '../../shared/constants.js';
import { hashApiKey } from '../domain/api-keys.js';
import type { FoundKey, KeyStore } from '../ports/keys.js';
import type { RateDecision, RateLimiter } from '../ports/rate-limit.js';
import { ApiError } from './api-error.js';
import { applyDecision } from './rate-limit.js';
import { chargeFailure, failed } from './auth-failures.js';
import type { SessionAuth } from './session-auth.js';

export interface AuthContext {
  keyId: string;
  workspaceId: string;
  userId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
}

const KEY_SHAPE = new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9_-]{43}$`);

type Found = Awaited<ReturnType<KeyStore['findByHash']>>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The sign-in route (POST /sessions): it checks the key in its body itself, so a request
     * without Authorization reaches it.
     */
    signIn?: boolean;
  }
}

/**
 * The onRequest hook that authenticates every API call and charges the key's request budget.
 * Callback style, and synchronous when key store and limiter answer from memory: this runs on
 * every request, and an async hook costs promises and microtask turns each time. Without an
 * Authorization header, a dashboard session cookie authenticates instead (`sessions`), charged to
 * the session's key. Failed authentications are charged to the address in `failures`
 * (service/http/auth-failures.ts); none given, they are not limited.
 */
export function makeAuthenticate(keys: KeyStore, limiter: RateLimiter, sessions?: SessionAuth, failures?: RateLimiter) {
  return function authenticate(req: FastifyRequest, reply: FastifyReply, finish: (err?: Error) => void): void {
    const done = (err?: Error): void => (err ? failed(failures, req, err, finish) : finish());
    const charged = (d: RateDecision): void => done(applyDecision(d, reply));
    const charge = (keyId: string): void => {
      let d: ReturnType<RateLimiter['take']>;
      try {
        d = limiter.take(keyId);
      } catch (err) {
        return done(err as Error);
      }
      if (d instanceof Promise) d.then(charged, done);
      else charged(d);
    };
    const header = req.headers.authorization;
    if (!header) {
      if (req.routeOptions?.config?.signIn) return done();
      const sid = sessions?.idOf(req);
      if (sid && sessions) {
        sessions.check(req, sid).then((s) => {
          req.dashboardSession = s;
          req.auth = { keyId: s.found.keyId, workspaceId: s.found.workspaceId, userId: s.found.userId };
          charge(s.found.keyId);
        }, done);
        return;
      }
    }
    const m = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
    const key = m?.[1];
    if (!key || !KEY_SHAPE.test(key)) return done(new ApiError('UNAUTHORIZED'));
    const keyHash = hashApiKey(key);
    const accept = (rec: Found): void => {
      if (!rec || rec.revokedAt || !timingSafeEqual(rec.keyHash, keyHash)) return done(new ApiError('UNAUTHORIZED'));
      req.auth = { keyId: rec.id, workspaceId: rec.workspaceId, userId: rec.userId };
      charge(rec.id);
    };
    let found: ReturnType<KeyStore['findByHash']>;
    try {
      found = keys.findByHash(keyHash);
    } catch (err) {
      return done(err as Error);
    }
    if (found instanceof Promise) found.then(accept, done);
    else accept(found);
  };
}

/**
 * Checks an API key sent in a body (sign-in) as the hook checks a Bearer key, charging its budget;
 * answers the key's record, or throws UNAUTHORIZED / RATE_LIMITED.
 */
export async function checkApiKey(
  keys: KeyStore,
  limiter: RateLimiter,
  key: string,
  reply: FastifyReply,
  failures?: RateLimiter,
): Promise<FoundKey> {
  const refuse = () => chargeFailure(failures, reply.request, new ApiError('UNAUTHORIZED'));
  if (!KEY_SHAPE.test(key)) throw await refuse();
  const keyHash = hashApiKey(key);
  const rec = await keys.findByHash(keyHash);
  if (!rec || rec.revokedAt || !timingSafeEqual(rec.keyHash, keyHash)) throw await refuse();
  const refused = applyDecision(await limiter.take(rec.id), reply);
  if (refused) throw refused;
  return rec;
}

export function requireAuth(req: FastifyRequest): AuthContext {
  if (!req.auth) throw new ApiError('UNAUTHORIZED');
  return req.auth;
}
