// The job tracker against the real reference service over real HTTP: jobs appear, changes are
// published (renderComplete once), polling is fast while a job is active and slow while idle,
// a 429's Retry-After is honoured, errors back off, and a key stored later is picked up. The
// service's requests are observed through a recording fetch that only watches real calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyProvider } from '../../daemon/keychain/api-key.js';
import { EventBus } from '../../daemon/track/events.js';
import { JobTracker } from '../../daemon/track/tracker.js';
import type { DaemonEvent } from '../../shared/daemon/api.js';
import { waitUntil } from '../helpers/e2e.js';
import { createJob } from '../helpers/flow.js';
import { api } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

interface Seen {
  at: number;
  path: string;
  status: number;
  retryAfter: string | null;
}

function recordingFetch(seen: Seen[]): typeof fetch {
  return async (input, init) => {
    const at = Date.now();
    const path = new URL(String(input)).pathname + new URL(String(input)).search;
    try {
      const res = await fetch(input, init);
      seen.push({ at, path, status: res.status, retryAfter: res.headers.get('retry-after') });
      return res;
    } catch (err) {
      seen.push({ at, path, status: 0, retryAfter: null });
      throw err;
    }
  };
}

interface Harness {
  tracker: JobTracker;
  seen: Seen[];
  events: DaemonEvent[];
  env: NodeJS.ProcessEnv;
}

const started: JobTracker[] = [];

function track(
  baseUrl: string,
  apiKey: string | undefined,
  knobs: { pollActiveMs: number; pollIdleMs: number; maxBackoffMs?: number; onPause?: (ms: number) => void },
): Harness {
  const seen: Seen[] = [];
  const events: DaemonEvent[] = [];
  const env: NodeJS.ProcessEnv = apiKey ? { RENDERBRIDGE_API_KEY: apiKey } : {};
  const clients = new ApiKeyProvider({
    serviceUrl: baseUrl,
    keychain: null,
    env,
    clientOptions: { maxRetries: 0, fetch: recordingFetch(seen) },
  });
  const bus = new EventBus();
  bus.subscribe((e) => events.push(e));
  const tracker = new JobTracker({ clients, events: bus, ...knobs });
  tracker.start();
  started.push(tracker);
  return {
    tracker,
    seen,
    events,
    env,
  };
}

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await Promise.all(started.map((t) => t.stop()));
  await svc?.close();
});

describe('JobTracker', () => {
  it('sees new jobs, publishes each change, and renderComplete once per finished job (not for old ones)', async () => {
    const key = await svc.createApiKey('tracker-changes');
    const call = api(svc.baseUrl, key);
    const old = await createJob(call);
    expect((await call('POST', `/jobs/${old.id}/cancel`)).status).toBe(200);

    const h = track(svc.baseUrl, key, { pollActiveMs: 100, pollIdleMs: 300 });
    await waitUntil('the first poll', () => h.tracker.polls >= 1);
    expect(h.tracker.list().map((t) => t.job.id)).toEqual([old.id]);

    const job = await createJob(call);
    const appeared = await waitUntil('the new job', () => h.tracker.list().find((t) => t.job.id === job.id));
    expect(appeared.job.status).toBe('created');
    expect(h.tracker.list()[0]!.job.id).toBe(job.id); // newest first
    expect((await call('POST', `/jobs/${job.id}/validate`, {})).status).toBe(202);
    await waitUntil('validating', () => h.tracker.list().find((t) => t.job.id === job.id)?.job.status === 'validating');
    expect((await call('POST', `/jobs/${job.id}/cancel`)).status).toBe(200);
    await waitUntil('renderComplete', () => h.events.some((e) => e.event === 'renderComplete'));
    const polled = h.tracker.polls;
    await waitUntil('three more polls', () => h.tracker.polls >= polled + 3);

    const mine = h.events.filter(
      (e) => (e.event === 'job' ? e.data.job.id : e.event === 'renderComplete' ? e.data.jobId : undefined) === job.id,
    );
    const statuses = mine.filter((e) => e.event === 'job').map((e) => (e.event === 'job' ? e.data.job.status : ''));
    expect(statuses).toEqual(['created', 'validating', 'canceled']);
    const completes = h.events.filter((e) => e.event === 'renderComplete');
    expect(completes).toHaveLength(1);
    expect(completes[0]).toMatchObject({
      event: 'renderComplete',
      data: { jobId: job.id, status: 'canceled', outDir: null, job: { id: job.id, status: 'canceled' } },
    });
    // The job canceled before the tracker started is history, not news.
    expect(h.events.some((e) => e.event === 'job' && e.data.job.id === old.id)).toBe(false);
  });

  it('waits pollActiveMs between polls while a job is active and pollIdleMs while none is', async () => {
    const key = await svc.createApiKey('tracker-rates');
    const call = api(svc.baseUrl, key);
    // The waits the tracker chooses, observed as they begin: no poll is counted against the clock.
    const pauses: number[] = [];
    const h = track(svc.baseUrl, key, { pollActiveMs: 100, pollIdleMs: 800, onPause: (ms) => pauses.push(ms) });
    await waitUntil('the first wait', () => pauses.length >= 1);
    expect(pauses).toEqual([800]);

    const job = await createJob(call);
    await call('POST', `/jobs/${job.id}/validate`, {});
    // No worker runs in this service: the job stays in `validating`, an active state.
    await waitUntil(
      'validating seen',
      () => h.tracker.list().find((t) => t.job.id === job.id)?.job.status === 'validating',
      { timeoutMs: 5000 },
    );
    const activeFrom = pauses.length;
    await waitUntil('three waits while active', () => pauses.length >= activeFrom + 3, { timeoutMs: 5000 });
    expect(new Set(pauses.slice(activeFrom))).toEqual(new Set([100]));

    await call('POST', `/jobs/${job.id}/cancel`);
    await waitUntil(
      'canceled seen',
      () => h.tracker.list().find((t) => t.job.id === job.id)?.job.status === 'canceled',
      { timeoutMs: 5000 },
    );
    const idleFrom = pauses.length;
    await waitUntil('a wait once idle again', () => pauses.length >= idleFrom + 1, { timeoutMs: 5000 });
    expect(pauses.slice(idleFrom)).toEqual([800]);
  });

  it('waits the Retry-After of a 429 before calling again, even when kicked', async () => {
    const limited = await startTestService({ rateLimitMax: 6, rateLimitWindowMs: 3000 });
    try {
      const h = track(limited.baseUrl, limited.apiKey, { pollActiveMs: 50, pollIdleMs: 50 });
      const first429 = await waitUntil('a 429', () => h.seen.find((s) => s.status === 429), { timeoutMs: 5000 });
      h.tracker.kick();
      const success = await waitUntil(
        'a success after the 429',
        () => h.seen.find((s) => s.at > first429.at && s.status === 200),
        { timeoutMs: 10_000 },
      );
      const retryAfterMs = Number(first429.retryAfter) * 1000;
      expect(retryAfterMs).toBeGreaterThanOrEqual(1000);
      const next = h.seen.filter((s) => s.at > first429.at).sort((a, b) => a.at - b.at)[0]!;
      expect(next.at - first429.at).toBeGreaterThanOrEqual(retryAfterMs - 50);
      // Without honouring it, polling every 50 ms would have met the limit dozens of times before
      // that success. (Afterwards the budget refills at 2 per second while the tracker polls at 20
      // per second, so later 429s are expected and each is honoured the same way.)
      expect(h.seen.filter((s) => s.status === 429 && s.at <= success.at)).toHaveLength(1);
    } finally {
      await Promise.all(started.map((t) => t.stop()));
      await limited.close();
    }
  }, 20_000);

  it('backs off exponentially while the service cannot be reached', async () => {
    // A port nothing listens on: every attempt is refused at once.
    const gone = await startTestService();
    const url = gone.baseUrl;
    await gone.close();
    const h = track(url, 'rb_live_' + 'x'.repeat(43), { pollActiveMs: 100, pollIdleMs: 100, maxBackoffMs: 60_000 });
    await waitUntil('five attempts', () => h.seen.length >= 5, { timeoutMs: 10_000 });
    const at = h.seen.map((s) => s.at);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(h.seen.every((s) => s.status === 0)).toBe(true);
    // 100, 200, 400, 800 ms: each pause about twice the one before.
    expect(gaps[0]).toBeGreaterThanOrEqual(90);
    expect(gaps[3]!).toBeGreaterThanOrEqual(700);
    expect(gaps[3]!).toBeGreaterThan(gaps[1]! * 1.5);
    await h.tracker.stop();
  });

  it('waits without calling the service until a key is configured, then starts tracking', async () => {
    const pauses: number[] = [];
    const h = track(svc.baseUrl, undefined, { pollActiveMs: 100, pollIdleMs: 200, onPause: (ms) => pauses.push(ms) });
    // Two rounds without a key: each ends in the idle wait, with no call to the service.
    await waitUntil('two waits for a key', () => pauses.length >= 2, { timeoutMs: 5000 });
    expect(pauses.slice(0, 2)).toEqual([200, 200]);
    expect(h.seen).toHaveLength(0);
    expect(h.tracker.polls).toBe(0);
    h.env.RENDERBRIDGE_API_KEY = svc.apiKey;
    await waitUntil('a poll with the new key', () => h.tracker.polls >= 1, { timeoutMs: 3000 });
    expect(h.seen[0]!.status).toBe(200);
    await h.tracker.stop();
  });
});
