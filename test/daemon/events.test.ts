// GET /events over real HTTP: SSE framing (id, event, one data line of JSON), heartbeats, a slow
// client dropped without holding back a fast one, and streams ended on close.
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAEMON_EVENTS } from '../../shared/daemon/api.js';
import { type Submission } from '../../shared/daemon/submission-schemas.js';
import type { JobProgress } from '../../shared/api/progress.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { openSse, startTestDaemon, type TestDaemon } from './harness.js';

let svc: TestService;
let td: TestDaemon;

beforeAll(async () => {
  svc = await startTestService();
  td = await startTestDaemon(
    { serviceUrl: svc.baseUrl },
    { apiKey: svc.apiKey, sse: { heartbeatMs: 150, maxBufferedBytes: 256 * 1024 } },
  );
});
afterAll(async () => {
  await td?.close();
  await svc?.close();
});

function progress(jobId: string, framesDone: number): JobProgress {
  return {
    jobId,
    status: 'rendering',
    framesTotal: 10,
    framesDone,
    framesRendering: 1,
    framesFailed: 0,
    currentFrame: framesDone + 1,
    currentSample: 2,
    samplesTotal: 4,
    percent: framesDone * 10,
    etaSeconds: 5,
    updatedAt: new Date().toISOString(),
  };
}

function submission(path: string): Submission {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    path,
    step: 'uploading',
    jobId: null,
    uploadedBytes: 1,
    totalBytes: 2,
    pack: null,
    upload: null,
    preflight: null,
    warnings: [],
    error: null,
    outDir: null,
    createdAt: now,
    updatedAt: now,
  };
}

describe('SSE /events', () => {
  it('frames each event as id, name and one line of JSON matching DAEMON_EVENTS, with heartbeats between', async () => {
    const sse = await openSse(td.daemon.origin, td.daemon.token);
    try {
      expect(sse.status).toBe(200);
      expect(sse.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(sse.headers['cache-control']).toContain('no-cache');
      await sse.waitFor('the opening frame', (r) => r.frames.length >= 1);
      expect(sse.frames[0]).toMatchObject({ retry: '2000', comments: ['connected'] });

      const jobId = randomUUID();
      const p = progress(jobId, 3);
      const s = submission('/projects/line\nbreak "quoted".blend');
      td.daemon.events.publish({ event: 'progress', data: p });
      td.daemon.events.publish({ event: 'submission', data: s });
      const got = await sse.waitFor('two events', (r) => (r.events().length >= 2 ? r.events() : undefined));
      const frames = sse.frames.filter((f) => f.event);
      expect(frames.map((f) => f.event)).toEqual(['progress', 'submission']);
      for (const f of frames) {
        // Exactly three lines: id, event, data (a newline inside a value never splits the data line).
        expect(f.raw.split('\n')).toHaveLength(3);
        expect(f.raw).toMatch(/^id: \d+\nevent: \w+\ndata: \{.*\}$/);
      }
      expect(Number(frames[1]!.id)).toBe(Number(frames[0]!.id) + 1);
      expect(DAEMON_EVENTS.progress.parse(got[0]!.data)).toEqual(p);
      expect(DAEMON_EVENTS.submission.parse(got[1]!.data)).toEqual(s);

      await sse.waitFor('a heartbeat comment', (r) => r.frames.some((f) => f.comments.includes('heartbeat')), 3000);
    } finally {
      sse.close();
    }
  });

  it('needs the token and refuses browsers, like every route', async () => {
    const noToken = await openSse(td.daemon.origin, 'wrong-token');
    expect(noToken.status).toBe(401);
    noToken.close();
    const browser = await openSse(td.daemon.origin, td.daemon.token, { origin: 'http://evil.example' });
    expect(browser.status).toBe(403);
    browser.close();
  });

  it('drops a client that stops reading, while a reading client gets every event in order', async () => {
    const fast = await openSse(td.daemon.origin, td.daemon.token);
    // The slow client: a raw socket that sends the request, then never reads again.
    const slow: Socket = connect({ host: '127.0.0.1', port: td.daemon.port });
    let slowBytes = 0;
    let slowEnded = false;
    slow.on('data', (c: Buffer) => (slowBytes += c.length));
    slow.on('end', () => (slowEnded = true));
    slow.on('close', () => (slowEnded = true));
    slow.on('error', () => (slowEnded = true));
    await new Promise<void>((resolve) => slow.on('connect', resolve));
    slow.write(
      `GET /events HTTP/1.1\r\nHost: 127.0.0.1:${td.daemon.port}\r\nAuthorization: Bearer ${td.daemon.token}\r\n\r\n`,
    );
    await fast.waitFor('both streams attached', () => td.daemon.events.streamCount >= 2);
    slow.pause();

    const droppedBefore = td.daemon.events.droppedCount;
    const before = fast.events().length;
    const big = '/projects/' + 'x'.repeat(8000) + '.blend';
    let published = 0;
    // Batches the fast client can take in; the slow one's socket buffers fill until it is dropped.
    while (published < 4000 && td.daemon.events.droppedCount === droppedBefore) {
      for (let i = 0; i < 20; i++, published++)
        td.daemon.events.publish({ event: 'submission', data: submission(big) });
      await fast.waitFor('the fast client to catch up', (r) => r.events().length - before >= published, 10_000);
    }
    expect(td.daemon.events.droppedCount).toBe(droppedBefore + 1);
    // Many megabytes went by first: only a client that really fell behind is dropped.
    expect(published * 8000).toBeGreaterThan(256 * 1024);
    // A few more after the drop still reach the fast client.
    for (let i = 0; i < 5; i++, published++)
      td.daemon.events.publish({ event: 'submission', data: submission('/after.blend') });
    const got = await fast.waitFor('every event', (r) =>
      r.events().length - before >= published ? r.events().slice(before) : undefined,
    );
    const ids = got.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));
    expect(fast.ended).toBe(false);

    // The slow client, reading again, finds its stream cut short.
    slow.resume();
    await fast.waitFor('the slow stream to end', () => slowEnded, 10_000);
    expect(slowBytes).toBeLessThan(published * 8000);
    fast.close();
  }, 60_000);

  it('ends open streams when the daemon closes', async () => {
    const other = await startTestDaemon({ serviceUrl: svc.baseUrl }, { apiKey: svc.apiKey });
    const sse = await openSse(other.daemon.origin, other.daemon.token);
    await sse.waitFor('the opening frame', (r) => r.frames.length >= 1);
    const started = Date.now();
    await other.close();
    await sse.waitFor('the stream to end', (r) => r.ended, 5000);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
