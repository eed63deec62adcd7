// Secrets never reach the daemon's log: not the API key (valid or refused by the service), not
// the daemon's token, not a wrong token a caller sent, not the webhook secret, even at the most
// verbose level and through every path that logs (requests, refusals, service errors, polls).
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDaemonLogger } from '../../daemon/http/logging.js';
import { generateWebhookSecret, signWebhook } from '../../shared/webhooks/signing.js';
import { DAEMON_WEBHOOK_PATH } from '../../shared/daemon/api.js';
import { waitUntil } from '../helpers/e2e.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { daemonCall, openSse, rawRequest, startTestDaemon, type TestDaemon } from './harness.js';

function capture(): { lines: string[]; sink: Writable } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, sink };
}

let svc: TestService;
const secret = generateWebhookSecret();
const good = capture();
const refused = capture();
let td: TestDaemon;
let bad: TestDaemon;
const badKey = `rb_live_${randomBytes(32).toString('base64url')}`;

beforeAll(async () => {
  svc = await startTestService();
  td = await startTestDaemon(
    { serviceUrl: svc.baseUrl, webhookSecret: secret, pollActiveMs: 100, pollIdleMs: 100 },
    { apiKey: svc.apiKey, logger: createDaemonLogger('trace', good.sink) },
  );
  bad = await startTestDaemon(
    { serviceUrl: svc.baseUrl, pollActiveMs: 100, pollIdleMs: 100 },
    { apiKey: badKey, logger: createDaemonLogger('trace', refused.sink) },
  );
});
afterAll(async () => {
  await td?.close();
  await bad?.close();
  await svc?.close();
});

describe('daemon log', () => {
  it('never holds the API key, the token, a wrong token or the webhook secret', async () => {
    const call = daemonCall(td.daemon);
    const wrongToken = randomBytes(32).toString('base64url');
    expect((await call('GET', '/health')).status).toBe(200);
    expect(
      (await rawRequest(`${td.daemon.origin}/health`, { headers: { authorization: `Bearer ${wrongToken}` } })).status,
    ).toBe(401);
    expect((await call('GET', '/health', undefined, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await call('GET', '/jobs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await call('POST', '/pack', { path: '/a.blend', token: td.daemon.token })).status).toBe(400);
    const sse = await openSse(td.daemon.origin, td.daemon.token);
    await sse.waitFor('the stream', (r) => r.frames.length >= 1);
    sse.close();
    const body = JSON.stringify({
      event: 'onRenderComplete',
      jobId: '00000000-0000-4000-8000-000000000000',
      status: 'completed',
    });
    const hook = (signature: string) =>
      rawRequest(`${td.daemon.origin}${DAEMON_WEBHOOK_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'renderbridge-signature': signature },
        body,
      });
    expect((await hook(signWebhook(secret, body))).status).toBe(200);
    expect((await hook(signWebhook(generateWebhookSecret(), body))).status).toBe(401);
    // The second daemon's key is refused by the service at every poll.
    await waitUntil(
      'a logged poll failure',
      () => refused.lines.some((l) => l.includes('polling the service failed')),
      { timeoutMs: 5000 },
    );
    await waitUntil('polls of the first daemon', () => td.daemon.tracker.polls >= 3);

    const all = [...good.lines, ...refused.lines, ...td.logs, ...bad.logs].join('');
    // The log is really there and really verbose: requests, refusals and the poll failure.
    expect(all).toContain('incoming request');
    expect(all).toContain('DAEMON_UNAUTHORIZED');
    expect(all).toContain('WEBHOOK_SIGNATURE_INVALID');
    expect(all).toContain('UNAUTHORIZED');
    for (const [what, value] of [
      ['API key', svc.apiKey],
      ['refused API key', badKey],
      ['daemon token', td.daemon.token],
      ['other daemon token', bad.daemon.token],
      ['wrong token', wrongToken],
      ['webhook secret', secret],
    ] as const) {
      expect(all.includes(value), `${what} in the log`).toBe(false);
    }
  });
});
