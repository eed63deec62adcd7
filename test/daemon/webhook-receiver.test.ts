// The daemon's receiver of the service's signed onRenderComplete webhooks, over real HTTP: a valid
// signature makes the tracker poll at once (renderComplete arrives long before the idle poll would
// have found it); a bad signature, a stale timestamp or a missing header is refused with
// WEBHOOK_SIGNATURE_INVALID and polls nothing; without a secret the route does not exist.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret, signWebhook } from '../../shared/webhooks/signing.js';
import { ErrorBody } from '../../shared/api/error-body.js';
import { DAEMON_WEBHOOK_PATH, type DaemonEvent } from '../../shared/daemon/api.js';
import { waitUntil } from '../helpers/e2e.js';
import { createJob } from '../helpers/flow.js';
import { api } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { rawRequest, startTestDaemon, type TestDaemon } from './harness.js';

let svc: TestService;
let td: TestDaemon;
const secret = generateWebhookSecret();
const events: DaemonEvent[] = [];

beforeAll(async () => {
  svc = await startTestService();
  // Polls so rare that only the webhook can explain a prompt renderComplete.
  td = await startTestDaemon(
    { serviceUrl: svc.baseUrl, webhookSecret: secret, pollActiveMs: 60_000, pollIdleMs: 60_000 },
    { apiKey: svc.apiKey },
  );
  td.daemon.events.subscribe((e) => events.push(e));
  await waitUntil('the first poll', () => td.daemon.tracker.polls >= 1);
});
afterAll(async () => {
  await td?.close();
  await svc?.close();
});

function eventBody(jobId: string, status = 'completed'): string {
  return JSON.stringify({
    id: `evt_onRenderComplete_${jobId}`,
    event: 'onRenderComplete',
    jobId,
    workspaceId: svc.workspaceId,
    status,
    occurredAt: new Date().toISOString(),
  });
}

function post(body: string, headers: Record<string, string>) {
  return rawRequest(`${td.daemon.origin}${DAEMON_WEBHOOK_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}

describe('webhook receiver', () => {
  it('accepts a validly signed onRenderComplete without the token and polls at once', async () => {
    const call = api(svc.baseUrl, svc.apiKey);
    const job = await createJob(call);
    // The daemon has not seen this job yet, and its next poll is a minute away.
    expect((await call('POST', `/jobs/${job.id}/cancel`)).status).toBe(200);
    const pollsBefore = td.daemon.tracker.polls;
    const kicksBefore = td.daemon.tracker.kicks;
    const body = eventBody(job.id, 'canceled');
    const sentAt = Date.now();
    const res = await post(body, {
      'renderbridge-signature': signWebhook(secret, body),
      'renderbridge-event': 'onRenderComplete',
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ received: true });
    const done = await waitUntil(
      'renderComplete',
      () => events.find((e) => e.event === 'renderComplete' && e.data.jobId === job.id),
      { timeoutMs: 5000 },
    );
    expect(Date.now() - sentAt).toBeLessThan(5000);
    expect(td.daemon.tracker.kicks).toBe(kicksBefore + 1);
    expect(td.daemon.tracker.polls).toBeGreaterThan(pollsBefore);
    expect(done).toMatchObject({ data: { status: 'canceled', job: { id: job.id, status: 'canceled' } } });
  });

  it('refuses a wrong signature, a stale timestamp, a changed body, a missing header, and polls nothing', async () => {
    const body = eventBody(randomUUID());
    const old = Math.floor(Date.now() / 1000) - 3600;
    const cases: [string, string, Record<string, string>, string][] = [
      ['wrong secret', body, { 'renderbridge-signature': signWebhook(generateWebhookSecret(), body) }, 'mismatch'],
      ['stale timestamp', body, { 'renderbridge-signature': signWebhook(secret, body, old) }, 'expired'],
      [
        'changed body',
        body.replace('completed', 'failed'),
        { 'renderbridge-signature': signWebhook(secret, body) },
        'mismatch',
      ],
      ['missing header', body, {}, 'malformed'],
      ['garbage header', body, { 'renderbridge-signature': 'v1=abc' }, 'malformed'],
      // The daemon's token is not a way in either.
      ['token instead of a signature', body, { authorization: `Bearer ${td.daemon.token}` }, 'malformed'],
    ];
    const pollsBefore = td.daemon.tracker.polls;
    const kicksBefore = td.daemon.tracker.kicks;
    for (const [what, sent, headers, reason] of cases) {
      const res = await post(sent, headers);
      expect(res.status, what).toBe(401);
      const err = ErrorBody.parse(res.json);
      expect(err.name, what).toBe('WEBHOOK_SIGNATURE_INVALID');
      expect(err.metadata.reason, what).toBe(reason);
    }
    // A poll starts only from a kick, which the route gives before it answers: none was asked for
    // (no wait needed), and none ran since (the next timed poll is a minute away).
    expect(td.daemon.tracker.kicks).toBe(kicksBefore);
    expect(td.daemon.tracker.polls).toBe(pollsBefore);
  });

  it('refuses a browser Origin even with a valid signature', async () => {
    const body = eventBody(randomUUID());
    const res = await post(body, {
      'renderbridge-signature': signWebhook(secret, body),
      origin: 'http://evil.example',
    });
    expect(res.status).toBe(403);
    expect(ErrorBody.parse(res.json).name).toBe('DAEMON_FORBIDDEN_ORIGIN');
  });

  it('is a 404 when the daemon has no webhook secret', async () => {
    const off = await startTestDaemon({ serviceUrl: svc.baseUrl }, { apiKey: svc.apiKey });
    try {
      const body = eventBody(randomUUID());
      const res = await rawRequest(`${off.daemon.origin}${DAEMON_WEBHOOK_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'renderbridge-signature': signWebhook(secret, body) },
        body,
      });
      expect(res.status).toBe(404);
      expect(ErrorBody.parse(res.json).name).toBe('DAEMON_NOT_FOUND');
    } finally {
      await off.close();
    }
  });
});
