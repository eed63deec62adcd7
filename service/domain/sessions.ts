// The rules of dashboard sessions, without HTTP: ids, what is stored of them, their CSRF token,
// and when a session has ended.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FoundSession } from '../ports/sessions.js';

/** How long a session may live: without requests (idle) and at most (absolute), in ms. */
export interface SessionLifetime {
  idleMs: number;
  maxMs: number;
}

/** Activity is written at most this often: a request per page load must not be a write each time. */
export const TOUCH_EVERY_MS = 60_000;

/** A new session id: 256 random bits, base64url (43 characters). It lives only in the cookie. */
export function newSessionId(): string {
  return randomBytes(32).toString('base64url');
}

/** What the database keeps of a session id (the id carries 256 random bits: one fast hash suffices). */
export function hashSessionId(id: string): Buffer {
  return hash('sha256', `session:${id}`, 'buffer');
}

/**
 * The session's CSRF token, derived from its id: the server needs to store nothing more, and the
 * token reveals nothing of the id (a one-way hash under another label).
 */
export function csrfTokenFor(id: string): string {
  return hash('sha256', `csrf:${id}`, 'buffer').toString('base64url');
}

/** Whether `sent` is the session's CSRF token, in constant time. */
export function csrfMatches(id: string, sent: string | undefined): boolean {
  if (!sent) return false;
  const want = Buffer.from(csrfTokenFor(id));
  const got = Buffer.from(sent);
  return got.length === want.length && timingSafeEqual(got, want);
}

/** Why a stored session no longer authenticates, or undefined while it does. */
export function sessionEnded(
  s: FoundSession,
  now: number,
  life: SessionLifetime,
): 'revoked' | 'expired' | 'idle' | undefined {
  if (s.keyRevoked) return 'revoked';
  if (now >= s.expiresAt) return 'expired';
  if (now - s.lastSeenAt >= life.idleMs) return 'idle';
  return undefined;
}

/** When the session ends if it stays idle from `lastSeenAt` (what the client is told as expiresAt). */
export function sessionEndsAt(s: Pick<FoundSession, 'lastSeenAt' | 'expiresAt'>, life: SessionLifetime): number {
  return Math.min(s.expiresAt, s.lastSeenAt + life.idleMs);
}
