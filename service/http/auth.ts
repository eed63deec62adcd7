import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_PREFIX } from '../../shared/constants.js';
import type { KeyStore } from '../ports.js';
import { ApiError } from './api-error.js';

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

/** Keys carry 256 random bits, so one fast hash is as strong as a slow KDF and keeps auth cheap. */
export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

const KEY_SHAPE = new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9_-]{43}$`);

type Found = Awaited<ReturnType<KeyStore['findByHash']>>;

/**
 * The onRequest hook that authenticates every API call. Callback style, and synchronous when the
 * key store answers from memory: this runs on every request, and an async hook costs a promise
 * and a microtask turn each time.
 */
export function makeAuthenticate(keys: KeyStore) {
  return function authenticate(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
    const header = req.headers.authorization;
    const m = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
    const key = m?.[1];
    if (!key || !KEY_SHAPE.test(key)) return done(new ApiError('UNAUTHORIZED'));
    const hash = hashApiKey(key);
    const accept = (rec: Found): void => {
      if (!rec || rec.revokedAt || !timingSafeEqual(rec.keyHash, hash)) return done(new ApiError('UNAUTHORIZED'));
      req.auth = { keyId: rec.id, workspaceId: rec.workspaceId, userId: rec.userId };
      done();
    };
    let found: ReturnType<KeyStore['findByHash']>;
    try {
      found = keys.findByHash(hash);
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
