// GET /events (extension job-events) over real HTTP on every stack: a stream opens with the
// workspace's jobs, then follows each change made through the stores (as a worker anywhere would
// make it), never carries another workspace's job, beats, refuses clients that cannot read a
// stream, and ends once the dashboard session it was opened with ends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobEvent } from '../../../shared/api/dashboard.js';
import { openKeyStore } from '../../../service/stack.js';
import type { Job } from '../../../shared/api/job.js';
import { waitUntil } from '../../helpers/e2e.js';
import { createJob } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { useTestService } from '../../helpers/service.js';
import { appOn, type AppOn } from '../dashboard/app-on.js';
import { signIn } from '../dashboard/session-client.js';
import { openSse, type SseEvent, type SseStream } from '../dashboard/sse.js';

let fast: AppOn;
const streams: SseStream[] = [];

const used = useTestService();
beforeAll(async () => {
  // Short periods so changes and heartbeats come quickly; the defaults are 1 s and 15 s.
  fast = await appOn(used.svc, { eventStream: { pollMs: 100, heartbeatMs: 200 } });
});
afterAll(async () => {
  for (const s of streams) s.close();
  await fast?.close();
});

async function stream(headers: Record<string, string>): Promise<SseStream> {
  const s = await openSse(`${fast.baseUrl}/events`, headers);
  streams.push(s);
  return s;
}

const jobEvent = (e: SseEvent) => (e.event === 'job' ? JobEvent.parse(JSON.parse(e.data)) : undefined);
const about = (id: string, status?: string) => (e: SseEvent) => {
  const j = jobEvent(e);
  return !!j && j.job.id === id && (status === undefined || j.job.status === status);
};

describe('the job event stream', () => {
  it("sends the workspace's jobs, then each status and counter change, and never another workspace's job", async () => {
    const own = api(used.svc.baseUrl, used.svc.apiKey);
    const rivalKey = await used.svc.createApiKey('rival events');
    const rival = api(used.svc.baseUrl, rivalKey);
    const existing = await createJob(own);
    const rivalJob = await createJob(rival);
    const mine = await stream({ authorization: `Bearer ${used.svc.apiKey}` });
    const theirs = await stream({ authorization: `Bearer ${rivalKey}` });
    expect(mine.status).toBe(200);
    expect(mine.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(mine.headers.get('x-request-id')).toBeTruthy();
    expect(mine.headers.get('x-ratelimit-limit')).toBeTruthy();
    await mine.next('the existing job in the snapshot', about(existing.id, 'created'));
    await theirs.next("the rival's job in its own snapshot", about(rivalJob.id));

    // Changes as a worker makes them, through the stores, in both workspaces.
    const fresh = await createJob(own);
    await mine.next('a new job', about(fresh.id, 'created'));
    const jobs = used.svc.service.ports.jobs;
    await jobs.transition(rivalJob.id, ['created'], 'validating');
    await jobs.transition(fresh.id, ['created'], 'validating');
    await mine.next('the move to validating', about(fresh.id, 'validating'));
    await jobs.transition(fresh.id, ['validating'], 'validated');
    await jobs.transition(fresh.id, ['validated'], 'booting');
    await jobs.transition(fresh.id, ['booting'], 'rendering');
    await jobs.setProgress({
      jobId: fresh.id,
      status: 'rendering',
      framesTotal: 10,
      framesDone: 4,
      framesRendering: 1,
      framesFailed: 0,
      currentFrame: 5,
      currentSample: 2,
      samplesTotal: 16,
      percent: 41,
      etaSeconds: 12,
      updatedAt: new Date().toISOString(),
    });
    const counted = await mine.next(
      'the frame counters',
      (e) => about(fresh.id, 'rendering')(e) && jobEvent(e)!.progress?.framesDone === 4,
    );
    expect(jobEvent(counted)!.progress).toMatchObject({ framesTotal: 10, percent: 41, status: 'rendering' });
    await theirs.next("the rival's own change", about(rivalJob.id, 'validating'));

    const seen = (s: SseStream) =>
      s.events
        .map(jobEvent)
        .filter((j): j is JobEvent => !!j)
        .map((j) => j.job.id);
    expect(seen(mine)).not.toContain(rivalJob.id);
    expect(seen(theirs)).not.toContain(fresh.id);
    expect(seen(theirs)).not.toContain(existing.id);
    // Every event is the job as GET /jobs/{id} serves it.
    const last = jobEvent(mine.events.filter(about(fresh.id)).at(-1)!)!;
    const served = (await own('GET', `/jobs/${fresh.id}`)).body as { data: Job };
    expect({ ...last.job, previewUrl: null }).toEqual({ ...served.data, previewUrl: null });
  });

  it('ends a stream opened with a key once the key is revoked', async () => {
    const key = await used.svc.createApiKey('revoked streamer');
    const s = await stream({ authorization: `Bearer ${key}` });
    expect(s.status).toBe(200);
    const store = await openKeyStore(used.svc.config);
    try {
      for (const k of await store.keys.listKeys('revoked streamer')) await store.keys.revokeKey(k.id);
    } finally {
      await store.close();
    }
    await s.next('the end of the stream', (e) => e.event === 'key-revoked');
    await waitUntil('the stream to close', () => s.ended());
  });

  it('keeps the connection alive with heartbeat comments', async () => {
    const s = await stream({ authorization: `Bearer ${used.svc.apiKey}` });
    await waitUntil('two heartbeats', () => s.comments.filter((c) => c.startsWith('heartbeat')).length >= 2);
    expect(s.ended()).toBe(false);
  });

  it('answers 406 to a client that only takes JSON, 401 without credentials, 400 to unknown parameters', async () => {
    const r = await api(used.svc.baseUrl, used.svc.apiKey)('GET', '/events');
    expect(r.status).toBe(406);
    expect(errorBody(r).name).toBe('NOT_ACCEPTABLE');
    expect((await openSse(`${used.svc.baseUrl}/events`, {})).status).toBe(401);
    const q = await openSse(`${used.svc.baseUrl}/events?since=1`, { authorization: `Bearer ${used.svc.apiKey}` });
    expect(q.status).toBe(400);
  });

  it('works with a session cookie, and ends with `session-ended` once that session is signed out', async () => {
    const s = await signIn(fast.baseUrl, used.svc.apiKey);
    const job = await createJob(api(used.svc.baseUrl, used.svc.apiKey));
    const live = await stream({ cookie: s.cookie });
    expect(live.status).toBe(200);
    await live.next('a job over the cookie stream', about(job.id));
    expect((await s.call('DELETE', '/sessions/current', undefined, { csrf: true })).status).toBe(200);
    await live.next('the end of the session', (e) => e.event === 'session-ended');
    await waitUntil('the stream to close', () => live.ended());
    // A new stream with the old cookie is refused.
    expect((await openSse(`${fast.baseUrl}/events`, { cookie: s.cookie })).status).toBe(401);
  });
});
