import { createHmac, timingSafeEqual } from 'node:crypto';

export type SignedMethod = 'GET' | 'PUT';

export interface SignedFields {
  method: SignedMethod;
  /** Object key, exactly as in the URL path after `/storage/`. */
  key: string;
  /** Unix seconds after which the URL is refused. */
  expiresAt: number;
  /** Extra parameters bound to the signature (e.g. `ft` file type, `fn` download name). */
  params: Record<string, string>;
}

export type VerifyResult = { ok: true } | { ok: false; reason: 'SIGNATURE_INVALID' | 'URL_EXPIRED' };

/** HMAC-SHA256 URL signer; the method is signed so a download URL can never be used to upload. */
export class UrlSigner {
  constructor(private readonly secret: Buffer) {
    if (secret.length < 32) throw new Error('URL-signing secret must be at least 32 bytes');
  }

  private mac(f: SignedFields): Buffer {
    const extras = Object.keys(f.params)
      .sort()
      .map((k) => `${k}=${f.params[k]}`)
      .join('&');
    return createHmac('sha256', this.secret).update(`${f.method}\n${f.key}\n${f.expiresAt}\n${extras}`).digest();
  }

  /** Query string (without `?`) carrying the extras, the expiry and the signature. */
  sign(f: SignedFields): string {
    const q = new URLSearchParams(f.params);
    q.set('exp', String(f.expiresAt));
    q.set('sig', this.mac(f).toString('base64url'));
    return q.toString();
  }

  /** Checks the signature first, so an edited expiry reads as tampering, not as expiry. */
  verify(f: SignedFields, sig: string | undefined, nowSeconds = Date.now() / 1000): VerifyResult {
    if (!sig || !Number.isSafeInteger(f.expiresAt)) return { ok: false, reason: 'SIGNATURE_INVALID' };
    // Compare the text, not decoded bytes: base64url's last character carries unused bits, so
    // several spellings decode to one MAC, and an edited URL must never be accepted.
    const given = Buffer.from(sig, 'utf8');
    const want = Buffer.from(this.mac(f).toString('base64url'), 'utf8');
    if (given.length !== want.length || !timingSafeEqual(given, want))
      return { ok: false, reason: 'SIGNATURE_INVALID' };
    if (nowSeconds > f.expiresAt) return { ok: false, reason: 'URL_EXPIRED' };
    return { ok: true };
  }
}
