// The dispatcher against a real local HTTP receiver and a real SQLite database in a temp folder.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqlite, type SqliteHandle } from '../../../service/adapters/sqlite/db.js';
import { openWebhookStore, type SqliteWebhookStore } from '../../../service/adapters/sqlite/webhook-store.js';
import {
  enqueueRenderComplete,
  renderCompleteEventId,
  WebhookDispatcher,
  type DispatcherLogger,
} from '../../../service/webhooks/delivery.js';
import { generateWebhookSecret, verifyWebhookSignature } from '../../../shared/webhooks/signing.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  verified: boolean;
}

let dir: string;
let handle: SqliteHandle;
let store: SqliteWebhookStore;
let server: Server;
let url: string;
let received: Received[];
/** Status codes the receiver answers, in order; 200 once used up. */
let answers: number[];
/** The receiver's clock for checking signature age (tests with a fake dispatcher clock set it). */
let receiverNowMs: () => number;
const secret = generateWebhookSecret();
const ws = randomUUID();

function recordingLogger(lines: string[]): DispatcherLogger {
  return {
    info: (obj, msg) => void lines.push(JSON.stringify({ ...obj, msg })),
    warn: (obj, msg) => void lines.push(JSON.stringify({ ...obj, msg })),
  };
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rb-webhooks-'));
  handle = await openSqlite(path.join(dir, 'renderbridge.sqlite'));
  store = openWebhookStore(handle);
  received = [];
  answers = [];
  receiverNowMs = Date.now;
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const verified = verifyWebhookSignature(
        secret,
        req.headers['renderbridge-signature'] as string,
        body,
        300,
        Math.floor(receiverNowMs() / 1000),
      ).ok;
      received.push({ headers: req.headers, body, verified });
      res.statusCode = answers.shift() ?? 200;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/render?token=abc`;
  await store.setWebhook(ws, { url, secret });
});

afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await handle.close();
  await rm(dir, { recursive: true, force: true });
});

describe('webhook delivery', () => {
  it('retries after a 500 and delivers a signed onRenderComplete on the second attempt', async () => {
    answers = [500];
    let now = 1_750_000_000_000;
    receiverNowMs = () => now;
    const logs: string[] = [];
    const d = new WebhookDispatcher({
      store,
      now: () => now,
      random: () => 0.5,
      baseDelayMs: 1000,
      jitter: 0.2,
      logger: recordingLogger(logs),
    });
    const jobId = randomUUID();
    const event = await enqueueRenderComplete(store, { id: jobId, workspaceId: ws, status: 'completed' }, now);
    expect(event?.id).toBe(renderCompleteEventId(jobId));

    expect(await d.tick()).toBe(1);
    let state = await store.getDelivery(event!.id);
    expect(state).toMatchObject({
      state: 'pending',
      attempts: 1,
      lastStatus: 500,
      lastError: 'HTTP 500',
      nextAttemptAt: now + 900,
    });
    expect(await d.tick()).toBe(0); // not due yet

    now += 900;
    expect(await d.tick()).toBe(1);
    state = await store.getDelivery(event!.id);
    expect(state).toMatchObject({ state: 'delivered', attempts: 2, lastStatus: 200, nextAttemptAt: null });

    expect(received).toHaveLength(2);
    for (const [i, r] of received.entries()) {
      expect(r.verified).toBe(true);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['renderbridge-event']).toBe('onRenderComplete');
      expect(r.headers['renderbridge-event-id']).toBe(event!.id);
      expect(r.headers['renderbridge-delivery-attempt']).toBe(String(i + 1));
      expect(JSON.parse(r.body)).toEqual({
        id: event!.id,
        event: 'onRenderComplete',
        jobId,
        workspaceId: ws,
        status: 'completed',
        occurredAt: new Date(1_750_000_000_000).toISOString(),
      });
    }
    // The same body on every attempt: receivers deduplicate on the id.
    expect(received[0]!.body).toBe(received[1]!.body);
    const all = logs.join('\n');
    expect(all).not.toContain(secret);
    expect(all).not.toContain('token=abc');
    expect(await store.listForJob(jobId)).toHaveLength(1);
  });

  it('backs off exponentially up to the cap, and gives up after maxAttempts', async () => {
    answers = [503, 503, 503];
    let now = 0;
    const d = new WebhookDispatcher({
      store,
      now: () => now,
      random: () => 0,
      baseDelayMs: 100,
      maxDelayMs: 250,
      maxAttempts: 3,
    });
    expect([1, 2, 3, 4].map((n) => d.retryDelay(n))).toEqual([100, 200, 250, 250]);
    const ev = await enqueueRenderComplete(store, { id: randomUUID(), workspaceId: ws, status: 'completed' }, now);
    await d.tick();
    now = (await store.getDelivery(ev!.id))!.nextAttemptAt!;
    await d.tick();
    now = (await store.getDelivery(ev!.id))!.nextAttemptAt!;
    await d.tick();
    expect(await store.getDelivery(ev!.id)).toMatchObject({
      state: 'failed',
      attempts: 3,
      lastStatus: 503,
      nextAttemptAt: null,
    });
    now += 1e9;
    expect(await d.tick()).toBe(0);
    expect(received).toHaveLength(3);
  });

  it('enqueues once per event, and nothing for a workspace without a webhook', async () => {
    const job = { id: randomUUID(), workspaceId: ws, status: 'completed' };
    await enqueueRenderComplete(store, job);
    await enqueueRenderComplete(store, job);
    expect(await store.listForJob(job.id)).toHaveLength(1);
    expect(await enqueueRenderComplete(store, { ...job, id: randomUUID(), workspaceId: randomUUID() })).toBeUndefined();
  });

  it('treats timeouts, refused connections and redirects as failures', async () => {
    const d = new WebhookDispatcher({ store, timeoutMs: 200, random: () => 0 });
    answers = [302];
    const a = await enqueueRenderComplete(store, { id: randomUUID(), workspaceId: ws, status: 'completed' });
    await d.tick();
    expect(await store.getDelivery(a!.id)).toMatchObject({ state: 'pending', lastStatus: 302, lastError: 'HTTP 302' });

    // A port that was just free: nothing listens there.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const other = randomUUID();
    await store.setWebhook(other, { url: `http://127.0.0.1:${closedPort}/refused`, secret });
    const b = await enqueueRenderComplete(store, { id: randomUUID(), workspaceId: other, status: 'completed' });
    await d.tick();
    expect((await store.getDelivery(b!.id))?.lastError).toMatch(/fetch failed: ECONNREFUSED/);

    const hang = createServer(() => undefined); // never answers
    await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
    try {
      await store.setWebhook(other, { url: `http://127.0.0.1:${(hang.address() as AddressInfo).port}/`, secret });
      const c = await enqueueRenderComplete(store, { id: randomUUID(), workspaceId: other, status: 'completed' });
      await d.tick();
      expect((await store.getDelivery(c!.id))?.lastError).toBe('timed out after 200 ms');
    } finally {
      hang.closeAllConnections();
      hang.close();
    }
  });

  it('drops pending deliveries once the webhook is removed', async () => {
    const d = new WebhookDispatcher({ store });
    const ev = await enqueueRenderComplete(store, { id: randomUUID(), workspaceId: ws, status: 'completed' });
    expect(await store.removeWebhook(ws)).toBe(true);
    await d.tick();
    expect(await store.getDelivery(ev!.id)).toMatchObject({
      state: 'failed',
      lastError: 'the workspace has no webhook any more',
    });
    expect(received).toHaveLength(0);
  });

  it('keeps delivery state across closing and reopening the database; retries an attempt a crash cut off', async () => {
    const file = path.join(dir, 'renderbridge.sqlite');
    let now = 1_000_000;
    const jobId = randomUUID();
    const ev = await enqueueRenderComplete(store, { id: jobId, workspaceId: ws, status: 'completed' }, now);
    // A dispatcher leases the delivery, then the process dies before recording the outcome.
    const leased = await store.claimDue(now, 10, 30_000);
    expect(leased.map((l) => l.id)).toEqual([ev!.id]);
    await handle.close();

    handle = await openSqlite(file);
    store = openWebhookStore(handle);
    expect(await store.getWebhook(ws)).toMatchObject({ url, secret });
    expect(await store.getDelivery(ev!.id)).toMatchObject({
      state: 'pending',
      attempts: 1,
      nextAttemptAt: now + 30_000,
    });
    const d = new WebhookDispatcher({ store, now: () => now });
    expect(await d.tick()).toBe(0); // still leased
    now += 30_000;
    expect(await d.tick()).toBe(1);
    expect(await store.getDelivery(ev!.id)).toMatchObject({ state: 'delivered', attempts: 2 });
    await handle.close();

    handle = await openSqlite(file);
    store = openWebhookStore(handle);
    expect(await store.listForJob(jobId)).toMatchObject([
      { id: ev!.id, state: 'delivered', attempts: 2, lastStatus: 200 },
    ]);
  });

  it('start() polls in the background and stop() waits for the attempt in flight', async () => {
    answers = [500];
    const d = new WebhookDispatcher({ store, pollIntervalMs: 20, baseDelayMs: 50, jitter: 0 });
    d.start();
    const ev = await enqueueRenderComplete(store, { id: randomUUID(), workspaceId: ws, status: 'completed' });
    const deadline = Date.now() + 5000;
    while ((await store.getDelivery(ev!.id))?.state !== 'delivered' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    await d.stop();
    expect(await store.getDelivery(ev!.id)).toMatchObject({ state: 'delivered', attempts: 2 });
    expect(received.map((r) => r.verified)).toEqual([true, true]);
  });
});
