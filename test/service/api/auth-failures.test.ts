// Failed authentication is rate limited by address (issue 25): past the budget, an address's
// failures answer 429 RATE_LIMITED with Retry-After and the spec's error body instead of 401,
// while a valid key from the same address keeps working. On the scale stack the counts live in
// Redis (the stack's limiter), here in memory: the same test runs on both.
import { describe, expect, it } from 'vitest';
import { api, errorBody } from '../../helpers/http.js';
import { useTestService } from '../../helpers/service.js';

const LIMIT = 5;

const used = useTestService({ authFailureLimit: LIMIT, authFailureWindowMs: 60 * 60_000 });

const forged = `rb_live_${'A'.repeat(43)}`;

describe('failed authentication by address', () => {
  it('answers 401 up to the budget, then 429 with Retry-After; a valid key is never refused', async () => {
    const bad = api(used.svc.baseUrl, forged);
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) statuses.push((await bad('GET', '/jobs')).status);
    expect(statuses).toEqual(Array(LIMIT).fill(401));
    // Malformed keys and no key count too, on any route.
    for (const call of [api(used.svc.baseUrl, 'nonsense'), api(used.svc.baseUrl, undefined)]) {
      const r = await call('GET', '/jobs');
      const body = errorBody(r);
      expect([r.status, body.name, body.metadata.reason]).toEqual([429, 'RATE_LIMITED', 'authentication-failures']);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(body.message).toMatch(/Too many failed authentications from this address/);
    }
    // A sign-in with a bad key in the body is a failure like the others.
    const signIn = await api(used.svc.baseUrl, undefined)('POST', '/sessions', { apiKey: forged });
    expect([signIn.status, errorBody(signIn).name]).toEqual([429, 'RATE_LIMITED']);
    // The tenant with a valid key, from the same address, is served.
    const good = await api(used.svc.baseUrl, used.svc.apiKey)('GET', '/jobs');
    expect(good.status).toBe(200);
  });
});
