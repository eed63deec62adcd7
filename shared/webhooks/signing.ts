// Webhook signatures. Every delivery carries one header:
//
//   Renderbridge-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
//
// A receiver recomputes the HMAC over the exact bytes it received (before any JSON parsing),
// compares in constant time, and rejects timestamps older than its tolerance (default 300 s) so a
// captured request cannot be replayed later. Several `v1=` entries may appear (e.g. during a
// secret rotation); one match is enough. The secret is the `whsec_...` string printed by
// `renderbridge admin set-webhook`, used as is (its UTF-8 bytes are the HMAC key).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Renderbridge-Signature';

/** Default window, in seconds, within which a receiver accepts a signature's timestamp. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** A new signing secret: `whsec_` and 32 random bytes, base64url. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

function hmacHex(secret: string, timestamp: number, body: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

/** The header value for `body`, signed at `timestamp` (unix seconds; default now). */
export function signWebhook(secret: string, body: string | Buffer, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${hmacHex(secret, timestamp, body)}`;
}

export type VerifyResult =
  { ok: true; timestamp: number } | { ok: false; reason: 'malformed' | 'expired' | 'mismatch' };

/**
 * Checks a `Renderbridge-Signature` header against the raw body. `toleranceSeconds` (default 300)
 * bounds the age (and the clock skew into the future) of the timestamp; `nowSeconds` defaults to
 * the current time.
 */
export function verifyWebhookSignature(
  secret: string,
  header: string | null | undefined,
  body: string | Buffer,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
  nowSeconds = Math.floor(Date.now() / 1000),
): VerifyResult {
  if (!header) return { ok: false, reason: 'malformed' };
  let timestamp: number | undefined;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't' && /^\d{1,12}$/.test(v)) timestamp = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) candidates.push(v);
  }
  if (timestamp === undefined || candidates.length === 0) return { ok: false, reason: 'malformed' };
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return { ok: false, reason: 'expired' };
  const expected = Buffer.from(hmacHex(secret, timestamp, body), 'hex');
  // Compare every candidate (no early exit) so timing reveals nothing about which one matched.
  let match = false;
  for (const c of candidates) match = timingSafeEqual(expected, Buffer.from(c, 'hex')) || match;
  return match ? { ok: true, timestamp } : { ok: false, reason: 'mismatch' };
}
