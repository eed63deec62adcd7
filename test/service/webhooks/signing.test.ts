import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signWebhook, verifyWebhookSignature } from '../../../shared/webhooks/signing.js';

const secret = generateWebhookSecret();
const body = JSON.stringify({
  id: 'evt_1',
  event: 'onRenderComplete',
  jobId: 'j',
  workspaceId: 'w',
  status: 'completed',
  occurredAt: '2025-01-01T00:00:00.000Z',
});
const t = 1_750_000_000;

describe('webhook signatures', () => {
  it('secrets are long, random and prefixed', () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  it('is HMAC-SHA256 of "<t>.<body>" in hex, as documented', () => {
    const header = signWebhook(secret, body, t);
    const hex = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    expect(header).toBe(`t=${t},v1=${hex}`);
  });

  it('round-trips, for string and Buffer bodies', () => {
    const header = signWebhook(secret, body, t);
    expect(verifyWebhookSignature(secret, header, body, 300, t + 10)).toEqual({ ok: true, timestamp: t });
    expect(verifyWebhookSignature(secret, header, Buffer.from(body), 300, t - 10)).toEqual({ ok: true, timestamp: t });
  });

  it('detects a changed body, a wrong secret and a changed timestamp', () => {
    const header = signWebhook(secret, body, t);
    expect(verifyWebhookSignature(secret, header, body.replace('completed', 'failed'), 300, t)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(verifyWebhookSignature(generateWebhookSecret(), header, body, 300, t)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(verifyWebhookSignature(secret, header.replace(`t=${t}`, `t=${t + 1}`), body, 300, t)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    const flipped = header.slice(0, -1) + (header.endsWith('0') ? '1' : '0');
    expect(verifyWebhookSignature(secret, flipped, body, 300, t)).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('rejects replays outside the tolerance and malformed headers', () => {
    const header = signWebhook(secret, body, t);
    expect(verifyWebhookSignature(secret, header, body, 300, t + 301)).toEqual({ ok: false, reason: 'expired' });
    expect(verifyWebhookSignature(secret, header, body, 300, t - 301)).toEqual({ ok: false, reason: 'expired' });
    for (const bad of [
      undefined,
      '',
      'garbage',
      `t=${t}`,
      'v1=abc',
      `t=x,v1=${'a'.repeat(64)}`,
      `t=${t},v1=${'a'.repeat(63)}`,
    ]) {
      expect(verifyWebhookSignature(secret, bad, body, 300, t)).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('accepts a header with several v1 signatures when one matches (secret rotation)', () => {
    const header = signWebhook(secret, body, t);
    const other = signWebhook(generateWebhookSecret(), body, t).split(',')[1];
    expect(
      verifyWebhookSignature(secret, `${header.split(',')[0]},${other},${header.split(',')[1]}`, body, 300, t).ok,
    ).toBe(true);
  });
});
