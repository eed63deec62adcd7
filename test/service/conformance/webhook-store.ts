// One conformance suite for every WebhookStore adapter (SQLite, PostgreSQL): what the
// dispatcher (service/webhooks/delivery.ts) relies on.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { WebhookEvent, WebhookStore } from '../../../service/webhooks/ports.js';
import { withHarness } from './with-harness.js';

export interface WebhookStoreHarness {
  store: WebhookStore;
  /** A second, independent handle on the same data: another service instance. */
  other(): Promise<WebhookStore>;
  close(): Promise<void>;
}

function event(jobId = `job_${randomUUID()}`, workspaceId = 'ws'): WebhookEvent {
  return {
    id: `evt_${randomUUID()}`,
    event: 'onRenderComplete',
    jobId,
    workspaceId,
    status: 'completed',
    occurredAt: new Date().toISOString(),
  };
}

/** Claims until nothing is due, `limit` at a time; returns the ids in claim order. */
async function drain(store: WebhookStore, now: number, limit: number): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const batch = await store.claimDue(now, limit, 60_000);
    if (batch.length === 0) return ids;
    ids.push(...batch.map((d) => d.id));
  }
}

export interface WebhookConformanceOptions {
  /**
   * Whether two handles may claim at the same moment (service instances sharing the store).
   * Default true; an adapter that cannot says so here, and why, instead of skipping silently.
   */
  concurrentClaims?: boolean;
}

export function webhookStoreConformance(
  name: string,
  open: () => Promise<WebhookStoreHarness>,
  opts: WebhookConformanceOptions = {},
): void {
  describe(`WebhookStore conformance: ${name}`, () => {
    const withStore = withHarness(open);

    it(
      "sets, replaces and removes a workspace's endpoint",
      withStore(async ({ store }) => {
        const ws = randomUUID();
        expect(await store.getWebhook(ws)).toBeUndefined();
        await store.setWebhook(ws, { url: 'https://example.test/a', secret: 's1' });
        const first = await store.getWebhook(ws);
        expect(first).toMatchObject({ workspaceId: ws, url: 'https://example.test/a', secret: 's1' });
        await store.setWebhook(ws, { url: 'https://example.test/b', secret: 's2' });
        const replaced = await store.getWebhook(ws);
        expect(replaced).toMatchObject({ url: 'https://example.test/b', secret: 's2', createdAt: first!.createdAt });
        expect(replaced!.updatedAt >= first!.updatedAt).toBe(true);
        expect(await store.getWebhook(randomUUID())).toBeUndefined();
        expect(await store.removeWebhook(ws)).toBe(true);
        expect(await store.getWebhook(ws)).toBeUndefined();
        expect(await store.removeWebhook(ws)).toBe(false);
      }),
    );

    it(
      'enqueues one pending delivery per event id',
      withStore(async ({ store }) => {
        const e = event();
        const dueAt = Date.now();
        expect(await store.enqueue(e, dueAt)).toBe(true);
        expect(await store.enqueue({ ...e, status: 'failed' }, dueAt + 5000)).toBe(false);
        const d = await store.getDelivery(e.id);
        expect(d).toMatchObject({
          id: e.id,
          jobId: e.jobId,
          workspaceId: e.workspaceId,
          state: 'pending',
          attempts: 0,
          nextAttemptAt: dueAt,
          lastStatus: null,
          lastError: null,
          deliveredAt: null,
        });
        expect(d!.event).toEqual(e);
        expect(await store.getDelivery('evt_missing')).toBeUndefined();
      }),
    );

    it(
      'leases due deliveries longest due first, up to the limit, hidden until the lease ends',
      withStore(async ({ store }) => {
        const now = Date.now();
        const [a, b, later, c] = [event(), event(), event(), event()];
        await store.enqueue(a, now - 1000);
        await store.enqueue(b, now - 5000);
        await store.enqueue(later, now + 60_000);
        await store.enqueue(c, now - 1000);
        const first = await store.claimDue(now, 2, 30_000);
        expect(first.map((d) => d.id)).toEqual([b.id, a.id]);
        expect(first.map((d) => [d.attempts, d.nextAttemptAt])).toEqual([
          [1, now + 30_000],
          [1, now + 30_000],
        ]);
        expect(first[0]!.event).toEqual(b);
        expect((await store.claimDue(now, 10, 30_000)).map((d) => d.id)).toEqual([c.id]);
        expect(await store.claimDue(now + 29_999, 10, 30_000)).toEqual([]);
        expect(await store.claimDue(now, 0, 30_000)).toEqual([]);
        // The leases ran out without an outcome (the dispatcher died): they come back, counting the attempt.
        const again = await store.claimDue(now + 30_000, 10, 30_000);
        expect(again.map((d) => [d.id, d.attempts])).toEqual([
          [a.id, 2],
          [b.id, 2],
          [c.id, 2],
        ]);
        expect((await store.getDelivery(later.id))?.attempts).toBe(0);
      }),
    );

    it(
      'records the outcome of the current attempt only, and retries a failure when told',
      withStore(async ({ store }) => {
        const now = Date.now();
        const e = event();
        await store.enqueue(e, now);
        const [one] = await store.claimDue(now, 1, 30_000);
        await store.markFailed(e.id, one!.attempts, { status: 500, error: 'HTTP 500', nextAttemptAt: now + 1000 });
        expect(await store.getDelivery(e.id)).toMatchObject({
          state: 'pending',
          attempts: 1,
          nextAttemptAt: now + 1000,
          lastStatus: 500,
          lastError: 'HTTP 500',
        });
        expect(await store.claimDue(now + 999, 1, 30_000)).toEqual([]);
        const [two] = await store.claimDue(now + 1000, 1, 30_000);
        expect(two?.attempts).toBe(2);
        // A late outcome of attempt 1 must not overwrite attempt 2.
        await store.markDelivered(e.id, 1, { status: 200, at: now + 1500 });
        expect((await store.getDelivery(e.id))?.state).toBe('pending');
        await store.markDelivered(e.id, 2, { status: 204, at: now + 2000 });
        expect(await store.getDelivery(e.id)).toMatchObject({
          state: 'delivered',
          attempts: 2,
          nextAttemptAt: null,
          lastStatus: 204,
          lastError: null,
          deliveredAt: new Date(now + 2000).toISOString(),
        });
        await store.markFailed(e.id, 2, { status: null, error: 'late', nextAttemptAt: now + 5000 });
        expect((await store.getDelivery(e.id))?.state).toBe('delivered');
        expect(await store.claimDue(now + 10_000_000, 10, 30_000)).toEqual([]);
      }),
    );

    it(
      'gives a delivery up when no retry is left',
      withStore(async ({ store }) => {
        const now = Date.now();
        const e = event();
        await store.enqueue(e, now);
        const [d] = await store.claimDue(now, 1, 30_000);
        await store.markFailed(e.id, d!.attempts, { status: null, error: 'connect ECONNREFUSED', nextAttemptAt: null });
        expect(await store.getDelivery(e.id)).toMatchObject({
          state: 'failed',
          nextAttemptAt: null,
          lastStatus: null,
          lastError: 'connect ECONNREFUSED',
        });
        expect(await store.claimDue(now + 10_000_000, 10, 30_000)).toEqual([]);
      }),
    );

    it(
      "lists a job's deliveries oldest first",
      withStore(async ({ store }) => {
        const job = `job_${randomUUID()}`;
        const [x, y, other] = [event(job), event(job), event()];
        await store.enqueue(x, Date.now() + 5000);
        await store.enqueue(other, Date.now());
        await store.enqueue(y, Date.now());
        expect((await store.listForJob(job)).map((d) => d.id)).toEqual([x.id, y.id]);
        expect(await store.listForJob('job_none')).toEqual([]);
      }),
    );

    it(
      'shares endpoints and deliveries with another instance',
      withStore(async ({ store, other }) => {
        const ws = randomUUID();
        await store.setWebhook(ws, { url: 'https://example.test/hook', secret: 's' });
        const e = event(undefined, ws);
        await store.enqueue(e, Date.now());
        const b = await other();
        expect((await b.getWebhook(ws))?.url).toBe('https://example.test/hook');
        expect((await b.claimDue(Date.now(), 10, 30_000)).map((d) => d.id)).toEqual([e.id]);
        expect(await store.claimDue(Date.now(), 10, 30_000)).toEqual([]);
      }),
    );

    it.skipIf(opts.concurrentClaims === false)(
      'two instances claim due deliveries concurrently: each delivery once',
      withStore(async ({ store, other }) => {
        const now = Date.now();
        const events = Array.from({ length: 60 }, () => event());
        for (const e of events) await store.enqueue(e, now - 1000);
        const b = await other();
        // Three dispatchers per instance, each leasing small batches until nothing is due.
        const claimers = [store, store, store, b, b, b].map((s) => drain(s, now, 4));
        const claimed = (await Promise.all(claimers)).flat();
        expect(claimed.length).toBe(events.length);
        expect(new Set(claimed)).toEqual(new Set(events.map((e) => e.id)));
        expect((await store.getDelivery(events[0]!.id))?.attempts).toBe(1);
      }),
    );
  });
}
