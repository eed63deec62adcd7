// Signed URLs cannot be tampered with: not even by respelling the signature. base64url's last
// character of a 32-byte MAC carries 4 unused bits, so 16 spellings decode to the same bytes;
// the hostile sweep (hostile.test.ts) once found one that a byte comparison accepted.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { UrlSigner } from '../../../service/adapters/fs-storage/url-signer.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

it('accepts only the exact signature it issued, never another spelling of the same bytes', () => {
  const signer = new UrlSigner(randomBytes(32));
  const fields = {
    method: 'PUT' as const,
    key: 'uploads/ws/up_x/scene.blend',
    expiresAt: Math.floor(Date.now() / 1000) + 600,
    params: { ft: 'blend' },
  };
  const sig = new URLSearchParams(signer.sign(fields)).get('sig')!;
  expect(signer.verify(fields, sig)).toEqual({ ok: true });
  const variants = [...ALPHABET].filter((c) => c !== sig.at(-1)).map((c) => sig.slice(0, -1) + c);
  const sameBytes = variants.filter((v) => Buffer.from(v, 'base64url').equals(Buffer.from(sig, 'base64url')));
  expect(sameBytes.length).toBeGreaterThan(0);
  for (const v of variants) expect(signer.verify(fields, v)).toEqual({ ok: false, reason: 'SIGNATURE_INVALID' });
  expect(signer.verify(fields, `${sig}=`)).toEqual({ ok: false, reason: 'SIGNATURE_INVALID' });
});
