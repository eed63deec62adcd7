// Streams are bounded (issue 25): log follows and event streams are capped per API key and per
// process (429 TOO_MANY_STREAMS with Retry-After and the spec's error body, before anything is
// read), end after their longest duration with a last line saying the client may reconnect, and a
// follow of a job that shows nothing new ends once it has been idle. Real HTTP on every stack.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody } from '../../../shared/api/error-body.js';
import type { Job } from '../../../shared/api/job.js';
import { waitUntil } from '../../helpers/e2e.js';
import { createJob } from '../../helpers/flow.js';
import { useTestService } from '../../helpers/service.js';
import { openStream, type OpenStream } from '../../helpers/stream-client.js';
import { appOn, type AppOn } from '../dashboard/app-on.js';

let job: Job;
const open: OpenStream[] = [];

const used = useTestService({ maxStreamsPerKey: 2, maxStreams: 3 });
const { call } = used;
beforeAll(async () => {
  job = await createJob(call);
});
afterAll(async () => {
  for (const s of open) s.close();
});

async function stream(baseUrl: string, key: string, what: 'events' | 'follow', jobId = job.id): Promise<OpenStream> {
  const path = what === 'events' ? '/events' : `/jobs/${jobId}/logs?follow=true`;
  const s = await openStream(`${baseUrl}${path}`, {
    authorization: `Bearer ${key}`,
    accept: 'text/event-stream, text/plain',
  });
  open.push(s);
  return s;
}

async function refusal(s: OpenStream): Promise<[number, string, unknown]> {
  const body = ErrorBody.parse(await s.json());
  expect(Number(s.headers['retry-after'])).toBeGreaterThan(0);
  expect(body.message).toMatch(/close one|retry after/);
  return [s.status, body.name, body.metadata.scope];
}

describe('stream caps', () => {
  it(
    'refuses a key its third stream with 429 TOO_MANY_STREAMS, lets other keys in, and frees the place when a ' +
      'stream closes',
    async () => {
      const a = await stream(used.svc.baseUrl, used.svc.apiKey, 'events');
      const b = await stream(used.svc.baseUrl, used.svc.apiKey, 'follow');
      expect([a.status, b.status]).toEqual([200, 200]);
      for (const kind of ['events', 'follow'] as const) {
        expect(await refusal(await stream(used.svc.baseUrl, used.svc.apiKey, kind)), kind).toEqual([
          429,
          'TOO_MANY_STREAMS',
          'key',
        ]);
      }
      // A plain read of the log is no stream: still answered.
      expect((await call('GET', `/jobs/${job.id}/logs`)).status).toBe(200);
      // Another tenant has its own places, until the process is full (3).
      const otherKey = await used.svc.createApiKey('other tenant');
      const c = await stream(used.svc.baseUrl, otherKey, 'events');
      expect(c.status).toBe(200);
      expect(await refusal(await stream(used.svc.baseUrl, otherKey, 'events'))).toEqual([
        429,
        'TOO_MANY_STREAMS',
        'process',
      ]);
      // Closing a stream gives its place back.
      for (const s of [a, b, c]) s.close();
      await waitUntil('a place freed', async () => {
        const s = await stream(used.svc.baseUrl, used.svc.apiKey, 'events');
        s.close();
        return s.status === 200;
      });
    },
  );
});

describe('stream lifetimes', () => {
  let short: AppOn;
  let idle: AppOn;
  beforeAll(async () => {
    // One app whose streams last 1 s at most; one whose follows end after 1 s without news.
    const extra = { onJobCompleted: async () => undefined };
    short = await appOn(used.svc, {
      ...extra,
      config: { ...used.svc.config, streamMaxSeconds: 1, logFollowIdleSeconds: 3600, maxStreamsPerKey: 10 },
      eventStream: { heartbeatMs: 100 },
      taskLogs: { followPollMs: 50 },
    });
    idle = await appOn(used.svc, {
      ...extra,
      config: { ...used.svc.config, logFollowIdleSeconds: 1, maxStreamsPerKey: 10 },
      taskLogs: { followPollMs: 50, followMaxPollMs: 200 },
    });
  });
  afterAll(async () => {
    await short?.close();
    await idle?.close();
  });

  it('ends an event stream at its longest duration with stream-ended, saying the client may reconnect', async () => {
    const s = await stream(short.baseUrl, used.svc.apiKey, 'events');
    await waitUntil('the stream to end', () => s.ended());
    const last = /event: stream-ended\ndata: (.*)\n\n$/.exec(s.text());
    expect(last, s.text().slice(-300)).not.toBeNull();
    expect(JSON.parse(last![1]!)).toMatchObject({ reason: 'max-duration', reconnect: true, maxSeconds: 1 });
  });

  it(
    'ends a log follow at its longest duration, and one of an idle job once it has been idle, each with a last ' +
      'line',
    async () => {
      const long = await stream(short.baseUrl, used.svc.apiKey, 'follow');
      await waitUntil('the follow to end', () => long.ended());
      expect(long.text()).toMatch(
        /\[renderbridge\] this follow has been open for 1 s, the most this service allows: follow again to go on/,
      );
      const quiet = await stream(idle.baseUrl, used.svc.apiKey, 'follow');
      await waitUntil('the idle follow to end', () => quiet.ended());
      expect(quiet.text()).toMatch(
        /\[renderbridge\] the job has shown no new output and no change for 1 s: the follow ends here; follow again to go on/,
      );
    },
  );
});
