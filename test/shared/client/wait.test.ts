// waitForStatus and iterateJobs against a scripted HTTP server: every outcome, quickly.
import { afterEach, describe, expect, it } from 'vitest';
import type { Job } from '../../../shared/api/job.js';
import { JobStoppedError, WaitTimeoutError } from '../../../shared/client/errors.js';
import { RenderJobClient } from '../../../shared/client/client.js';
import type { JobStatus } from '../../../shared/job-status.js';
import { makeJob, sendJson, startServer, type TestServer } from './fixture.js';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A server whose n-th GET /jobs/{id} answers the n-th status (the last one repeats). */
async function jobServer(statuses: JobStatus[], extra: Partial<Job> = {}) {
  const job = makeJob('created', extra);
  let polls = 0;
  server = await startServer((_req, res) => {
    const status = statuses[Math.min(polls, statuses.length - 1)] ?? 'created';
    polls++;
    sendJson(res, 200, { data: { ...job, status } });
  });
  const client = new RenderJobClient({ baseUrl: server.baseUrl, apiKey: 'rb_live_k', baseDelayMs: 5 });
  return { client, job, polls: () => polls };
}

describe('waitForStatus', () => {
  it('polls until a target status and reports every state', async () => {
    const { client, job, polls } = await jobServer(['created', 'validating', 'validating', 'validated']);
    const seen: JobStatus[] = [];
    const done = await client.waitForStatus(job.id, ['validated'], {
      intervalMs: 10,
      onUpdate: (j) => seen.push(j.status),
    });
    expect(done.status).toBe('validated');
    expect(done.id).toBe(job.id);
    expect(seen).toEqual(['created', 'validating', 'validating', 'validated']);
    expect(polls()).toBe(4);
  });

  it('with firstIntervalMs, polls soon and then less often, up to intervalMs', async () => {
    // A minute between polls: only the growing first pauses let this end within the test's time.
    const { client, job, polls } = await jobServer(['validating', 'validating', 'validating', 'validated']);
    const done = await client.waitForStatus(job.id, ['validated'], { intervalMs: 60_000, firstIntervalMs: 10 });
    expect(done.status).toBe('validated');
    expect(polls()).toBe(4);
  });

  it('throws JobStoppedError with failedReason when the job fails', async () => {
    const failedReason = {
      name: 'NoCamera',
      type: 'VALIDATION_FAILED' as const,
      errorDetails: { message: 'the scene has no camera' },
    };
    const { client, job } = await jobServer(['validating', 'failed'], { failedReason });
    const err = (await client
      .waitForStatus(job.id, ['validated'], { intervalMs: 10 })
      .catch((e: unknown) => e)) as JobStoppedError;
    expect(err).toBeInstanceOf(JobStoppedError);
    expect(err.status).toBe('failed');
    expect(err.failedReason).toEqual(failedReason);
    expect(err.job.id).toBe(job.id);
    expect(err.message).toContain('the scene has no camera');
  });

  it('stops on any final state that is not a target, and accepts one that is', async () => {
    const canceled = await jobServer(['rendering', 'canceled']);
    const err = (await canceled.client
      .waitForStatus(canceled.job.id, ['completed'], { intervalMs: 10 })
      .catch((e: unknown) => e)) as JobStoppedError;
    expect(err).toBeInstanceOf(JobStoppedError);
    expect(err.status).toBe('canceled');
    expect(err.failedReason).toBeNull();
    await server?.close();

    const completed = await jobServer(['completed']);
    await expect(
      completed.client.waitForStatus(completed.job.id, ['validated'], { intervalMs: 10 }),
    ).rejects.toBeInstanceOf(JobStoppedError);
    await server?.close();

    const failed = await jobServer(['failed']);
    expect((await failed.client.waitForStatus(failed.job.id, ['completed', 'failed'])).status).toBe('failed');
  });

  it('gives up after timeoutMs with the last state seen', async () => {
    const { client, job } = await jobServer(['rendering']);
    const started = Date.now();
    const err = (await client
      .waitForStatus(job.id, ['completed'], { intervalMs: 20, timeoutMs: 150 })
      .catch((e: unknown) => e)) as WaitTimeoutError;
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect(err.lastJob?.status).toBe('rendering');
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(140);
    // Generous: only shows the wait ended at the deadline, not after many more polls.
    expect(elapsed).toBeLessThan(5000);
  });

  it('ends a hanging poll at the timeout', async () => {
    // The server never answers; requestTimeoutMs (30 s) must not decide when the wait ends.
    server = await startServer(() => undefined);
    const client = new RenderJobClient({ baseUrl: server.baseUrl, apiKey: 'rb_live_k' });
    const err = (await client
      .waitForStatus(makeJob('created').id, ['validated'], { timeoutMs: 100 })
      .catch((e: unknown) => e)) as WaitTimeoutError;
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect(err.lastJob).toBeUndefined();
  });

  it('stops with the abort reason when the signal aborts', async () => {
    const { client, job, polls } = await jobServer(['validating']);
    const controller = new AbortController();
    const reason = new Error('user stop');
    const waiting = client.waitForStatus(job.id, ['validated'], {
      intervalMs: 5000,
      signal: controller.signal,
      onUpdate: () => controller.abort(reason),
    });
    await expect(waiting).rejects.toBe(reason);
    expect(polls()).toBe(1);
  });
});

describe('iterateJobs', () => {
  it('walks every page and passes the status filter and page size', async () => {
    const all = Array.from({ length: 7 }, () => makeJob('completed'));
    server = await startServer((req, res) => {
      const url = new URL(req.url ?? '', 'http://x');
      const page = Number(url.searchParams.get('page'));
      const size = Number(url.searchParams.get('pageSize'));
      const jobs = all.slice((page - 1) * size, page * size);
      sendJson(res, 200, {
        jobs,
        pagination: { page, pageSize: size, total: all.length, totalPages: Math.ceil(all.length / size) },
      });
    });
    const client = new RenderJobClient({ baseUrl: server.baseUrl, apiKey: 'rb_live_k' });
    const ids: string[] = [];
    for await (const job of client.iterateJobs({ status: 'completed', pageSize: 3 })) ids.push(job.id);
    expect(ids).toEqual(all.map((j) => j.id));
    expect(server.requests.map((r) => new URL(r.url, 'http://x').search)).toEqual([
      '?page=1&pageSize=3&status=completed',
      '?page=2&pageSize=3&status=completed',
      '?page=3&pageSize=3&status=completed',
    ]);
  });

  it('stops on an empty page even if totalPages promises more', async () => {
    const first = [makeJob('created'), makeJob('created')];
    server = await startServer((req, res) => {
      const page = Number(new URL(req.url ?? '', 'http://x').searchParams.get('page'));
      sendJson(res, 200, {
        jobs: page === 1 ? first : [],
        pagination: { page, pageSize: 2, total: 10, totalPages: 5 },
      });
    });
    const client = new RenderJobClient({ baseUrl: server.baseUrl, apiKey: 'rb_live_k' });
    const ids: string[] = [];
    for await (const job of client.iterateJobs({ pageSize: 2 })) ids.push(job.id);
    expect(ids).toEqual(first.map((j) => j.id));
    expect(server.requests).toHaveLength(2);
  });
});
