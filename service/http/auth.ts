import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_PREFIX } from '../../shared/constants.js';
import { hashApiKey } from '../domain/api-keys.js';
import type { KeyStore } from '../ports/keys.js';
import type { RateDecision, RateLimiter } from '../ports/rate-limit.js';
import { ApiError } from './api-error.js';
import { applyDecision } from './rate-limit.js';

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

/**
 * The onRequest hook that authenticates every API call and charges the key's request budget.
 * Callback style, and synchronous when key store and limiter answer from memory: this runs on
 * every request, and an async hook costs promises and microtask turns each time.
 */
export function makeAuthenticate(keys: KeyStore, limiter: RateLimiter) {
  return function authenticate(req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
    const header = req.headers.authorization;
    const m = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
    const key = m?.[1];
    if (!key || !KEY_SHAPE.test(key)) return done(new ApiError('UNAUTHORIZED'));
    const keyHash = hashApiKey(key);
    const charged = (d: RateDecision): void => done(applyDecision(d, reply));
    const accept = (rec: Found): void => {
      if (!rec || rec.revokedAt || !timingSafeEqual(rec.keyHash, keyHash)) return done(new ApiError('UNAUTHORIZED'));
      req.auth = { keyId: rec.id, workspaceId: rec.workspaceId, userId: rec.userId };
      let d: ReturnType<RateLimiter['take']>;
      try {
        d = limiter.take(rec.id);
      } catch (err) {
        return done(err as Error);
      }
      if (d instanceof Promise) d.then(charged, done);
      else charged(d);
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

export function requireAuth(req: FastifyRequest): AuthContext {
  if (!req.auth) throw new ApiError('UNAUTHORIZED');
  return req.auth;
}
