// onRenderComplete end to end: a real render completes, the service POSTs the signed event to
// the workspace's endpoint, retries after the receiver's 500, and stops once it gets a 2xx.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderCompleteEventId } from '../../service/webhooks/delivery.js';
import { generateWebhookSecret, verifyWebhookSignature } from '../../shared/webhooks/signing.js';
import { buildFixture } from '../helpers/fixtures.js';
import { startE2E, submit, tinyRender, validationOutcome, waitUntil, type E2E } from '../helpers/e2e.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  answered: number;
}

let e2e: E2E;
let receiver: Server;
let url: string;
const received: Received[] = [];

beforeAll(async () => {
  // Fails the first delivery, accepts the next ones.
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answered = received.length === 0 ? 500 : 200;
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered });
      res.writeHead(answered, { 'content-type': 'text/plain' }).end(answered === 200 ? 'ok' : 'try later');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/render?token=abc`;
  e2e = await startE2E({ webhooks: { baseDelayMs: 200, pollIntervalMs: 100 } });
}, 120_000);
afterAll(async () => {
  await e2e?.svc.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('onRenderComplete webhook', () => {
  it('is delivered signed, retried after a 500 with the same event, and stops after the 2xx', async () => {
    const { client, svc } = e2e;
    const secret = generateWebhookSecret();
    await svc.service.webhooks.setWebhook(svc.workspaceId, { url, secret });

    const id = await submit(client, await buildFixture('basic'));
    expect((await validationOutcome(client, id)).status).toBe('validated');
    expect(received).toHaveLength(0); // validation is not an event
    await client.renderJob(id, tinyRender('1'));
    await client.waitForStatus(id, ['completed'], { intervalMs: 200, timeoutMs: 120_000 });

    await waitUntil('two deliveries', () => received.length >= 2, { timeoutMs: 30_000 });
    const eventId = renderCompleteEventId(id);
    const delivery = await waitUntil(
      'the delivery to be recorded as delivered',
      async () => {
        const d = await svc.service.webhooks.getDelivery(eventId);
        return d?.state === 'delivered' ? d : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(delivery.attempts).toBe(2);
    expect(received).toHaveLength(2);
    expect(received.map((r) => r.answered)).toEqual([500, 200]);

    // Both attempts carry the same event, byte for byte; only the attempt number differs.
    const [first, second] = received as [Received, Received];
    expect(second.body).toBe(first.body);
    expect(received.map((r) => r.headers['renderbridge-event-id'])).toEqual([eventId, eventId]);
    expect(received.map((r) => r.headers['renderbridge-delivery-attempt'])).toEqual(['1', '2']);
    for (const r of received) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['renderbridge-event']).toBe('onRenderComplete');
      const sig = r.headers['renderbridge-signature'] as string;
      expect(sig).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verifyWebhookSignature(secret, sig, r.body)).toMatchObject({ ok: true });
      // A wrong secret, or a body changed in transit, does not verify.
      expect(verifyWebhookSignature(generateWebhookSecret(), sig, r.body)).toEqual({ ok: false, reason: 'mismatch' });
      expect(verifyWebhookSignature(secret, sig, r.body.replace('completed', 'failed'))).toEqual({
        ok: false,
        reason: 'mismatch',
      });
    }

    const event = JSON.parse(second.body) as Record<string, unknown>;
    expect(event).toMatchObject({
      id: eventId,
      event: 'onRenderComplete',
      jobId: id,
      workspaceId: svc.workspaceId,
      status: 'completed',
    });
    expect(Number.isNaN(Date.parse(String(event.occurredAt)))).toBe(false);
    // What the receiver is told matches what the API says.
    const job = await client.getJob(id);
    expect(job).toMatchObject({ id, workspaceId: event.workspaceId, status: 'completed' });
  }, 240_000);
});
