// The worker API's own rate budget and listener, on the real service: each worker token has a budget
// apart from the API keys', and the worker API can listen on its own address only.
import { describe, expect, it } from 'vitest';
import { createWorkerToken } from '../../../service/domain/worker-tokens.js';
import { api, errorBody } from '../../helpers/http.js';
import { startTestService } from '../../helpers/service.js';
import { internal } from './worker-token-harness.js';

describe("the worker API's own budget and listener", () => {
  it('limits each worker token apart from API keys, and can listen on its own address only', async () => {
    const own = await startTestService({ workerApiPort: 0, workerApiRateLimitMax: 3, rateLimitMax: 10_000 });
    try {
      const origin = own.service.workerApiOrigin!;
      expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const { token } = await createWorkerToken(own.service.ports.workerTokens, 'budget-1');
      const other = await createWorkerToken(own.service.ports.workerTokens, 'budget-2');
      // The public listener does not serve the worker API at all.
      const onPublic = await internal(own.origin, token, 'GET', '/workers/me');
      expect(onPublic.status).toBe(404);
      expect(errorBody(onPublic).name).toBe('ROUTE_NOT_FOUND');

      for (let i = 0; i < 3; i++) expect((await internal(origin, token, 'GET', '/workers/me')).status).toBe(200);
      const limited = await internal(origin, token, 'GET', '/workers/me');
      expect(limited.status).toBe(429);
      expect(errorBody(limited).name).toBe('RATE_LIMITED');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another worker's budget, and the tenants', are untouched.
      expect((await internal(origin, other.token, 'GET', '/workers/me')).status).toBe(200);
      expect((await api(own.baseUrl, own.apiKey)('GET', '/jobs')).status).toBe(200);
    } finally {
      await own.close();
    }
  });
});
