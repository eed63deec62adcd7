import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
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

export function makeAuthenticate(keys: KeyStore) {
  return async function authenticate(req: FastifyRequest): Promise<void> {
    const header = req.headers.authorization;
    const m = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
    const key = m?.[1];
    if (!key || !KEY_SHAPE.test(key)) throw new ApiError('UNAUTHORIZED');
    const hash = hashApiKey(key);
    const rec = await keys.findByHash(hash);
    if (!rec || rec.revokedAt || !timingSafeEqual(rec.keyHash, hash)) throw new ApiError('UNAUTHORIZED');
    req.auth = { keyId: rec.id, workspaceId: rec.workspaceId, userId: rec.userId };
  };
}

export function requireAuth(req: FastifyRequest): AuthContext {
  if (!req.auth) throw new ApiError('UNAUTHORIZED');
  return req.auth;
}
