// The client against a real HTTP server on 127.0.0.1: headers, retries, back-off and errors.
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, NetworkError, ResponseFormatError } from '../../../shared/client/errors.js';
import { RenderJobClient } from '../../../shared/client/client.js';
import { API_PREFIX } from '../../../shared/constants.js';
import { errorBody, makeJob, sendJson, startServer, type Handler, type TestServer } from './fixture.js';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function clientFor(handler: Handler, options: Partial<ConstructorParameters<typeof RenderJobClient>[0]> = {}) {
  server = await startServer(handler);
  const client = new RenderJobClient({
    baseUrl: server.baseUrl,
    apiKey: 'rb_live_test',
    baseDelayMs: 5,
    maxDelayMs: 2000,
    ...options,
  });
  return { client, srv: server };
}

describe('requests', () => {
  it('sends bearer auth, JSON bodies and queries, and parses typed answers', async () => {
    const job = makeJob('created');
    const { client, srv } = await clientFor(
      (req, res) => {
        if (req.method === 'POST') sendJson(res, 201, { ...job, unknownKey: 'stripped' });
        else sendJson(res, 200, { jobs: [job], pagination: { page: 2, pageSize: 5, total: 6, totalPages: 2 } });
      },
      { userAgent: 'rb-test/1' },
    );

    const created = await client.createJob({ slug: 'abc' });
    expect(created).toEqual(job);
    const list = await client.listJobs({ page: 2, pageSize: 5, status: 'created' });
    expect(list.pagination.totalPages).toBe(2);

    const [post, get] = srv.requests;
    expect(post?.url).toBe(`${API_PREFIX}/jobs`);
    expect(post?.headers['authorization']).toBe('Bearer rb_live_test');
    expect(post?.headers['content-type']).toBe('application/json');
    expect(post?.headers['user-agent']).toBe('rb-test/1');
    expect(JSON.parse(post?.body ?? '')).toEqual({ slug: 'abc' });
    expect(get?.url).toBe(`${API_PREFIX}/jobs?page=2&pageSize=5&status=created`);
    expect(get?.headers['authorization']).toBe('Bearer rb_live_test');
    // No body, so no Content-Type: the service would reject an empty JSON body.
    expect(get?.headers['content-type']).toBeUndefined();
  });

  it('unwraps data envelopes and sends cancel without a body', async () => {
    const job = makeJob('rendering');
    const { client, srv } = await clientFor((req, res) => {
      if (req.url?.endsWith('/cancel')) sendJson(res, 200, { ...job, status: 'canceled' });
      else sendJson(res, 200, { data: job });
    });
    expect((await client.getJob(job.id)).status).toBe('rendering');
    expect((await client.cancelJob(job.id)).status).toBe('canceled');
    expect(srv.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      `GET ${API_PREFIX}/jobs/${job.id}`,
      `POST ${API_PREFIX}/jobs/${job.id}/cancel`,
    ]);
    expect(srv.requests[1]?.body).toBe('');
    expect(srv.requests[1]?.headers['content-type']).toBeUndefined();
  });

  it('tells a first render start (202) from an idempotent replay (200 + header)', async () => {
    const job = makeJob('booting');
    const { client } = await clientFor((_req, res, _body, i) => {
      if (i === 0) sendJson(res, 202, { ...job, queuePosition: 3 });
      else sendJson(res, 200, job, { 'X-Idempotent-Replay': 'true' });
    });
    const body = { requestedRenderConfig: { colorManagementPreset: 'default' as const } };
    const first = await client.renderJob(job.id, body);
    expect(first.replay).toBe(false);
    // The start-render answer keeps extra keys (the schema is loose).
    expect(first.job['queuePosition']).toBe(3);
    const again = await client.renderJob(job.id, body);
    expect(again.replay).toBe(true);
    expect(again.job.id).toBe(job.id);
  });

  it('rejects a 2xx answer that breaks the contract with ResponseFormatError', async () => {
    const { client } = await clientFor((_req, res) => sendJson(res, 200, { data: { id: 'not-a-job' } }));
    await expect(client.getJob(makeJob('created').id)).rejects.toBeInstanceOf(ResponseFormatError);
  });

  it('refuses a baseUrl without the API prefix', () => {
    expect(() => new RenderJobClient({ baseUrl: 'http://127.0.0.1:1/api', apiKey: 'k' })).toThrow(
      /\/api\/external\/v1/,
    );
  });
});

describe('errors', () => {
  it('throws ApiError with the status and the parsed error body', async () => {
    const body = errorBody('JOB_NOT_FOUND', 'No job with this id in your workspace.');
    const { client } = await clientFor((_req, res) => sendJson(res, 404, body));
    const err = await client.getJob(makeJob('created').id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    const apiError = err as ApiError;
    expect(apiError.status).toBe(404);
    expect(apiError.body).toEqual(body);
    expect(apiError.errorName).toBe('JOB_NOT_FOUND');
  });

  it('synthesizes an error body for a non-JSON answer', async () => {
    const { client } = await clientFor((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>Bad Gateway</html>');
    });
    // POST: a 502 is not retried, so one answer is enough.
    const err = (await client.createJob({ slug: 's' }).catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(502);
    expect(err.errorName).toBe('HTTP_502');
    expect(err.body.details).toEqual([]);
    expect(err.body.metadata).toEqual({ rawBody: '<html>Bad Gateway</html>', contentType: 'text/html' });
  });

  it('names a non-JSON 429 after the registry entry', async () => {
    const { client, srv } = await clientFor(
      (_req, res) => {
        res.writeHead(429, { 'content-type': 'text/plain' });
        res.end('slow down');
      },
      { maxRetries: 2 },
    );
    const err = (await client.listProgress().catch((e: unknown) => e)) as ApiError;
    expect(err.errorName).toBe('RATE_LIMITED');
    // Exhausting the retries still ends with the ApiError: one attempt plus maxRetries.
    expect(srv.requests).toHaveLength(3);
  });
});

describe('retries', () => {
  it('waits for Retry-After on a 429, even for a POST, then succeeds', async () => {
    const job = makeJob('created');
    const { client, srv } = await clientFor((_req, res, _body, i) => {
      if (i === 0) sendJson(res, 429, errorBody('RATE_LIMITED', 'Too many requests'), { 'Retry-After': '1' });
      else sendJson(res, 201, job);
    });
    const started = Date.now();
    const created = await client.createJob({ slug: 'abc' });
    expect(created.id).toBe(job.id);
    expect(srv.requests).toHaveLength(2);
    // Timer granularity can fire a few ms early; the back-off alone (baseDelayMs 5) is far shorter.
    const gap = (srv.requests[1]?.at ?? 0) - (srv.requests[0]?.at ?? 0);
    expect(gap).toBeGreaterThanOrEqual(980);
    expect(Date.now() - started).toBeGreaterThanOrEqual(980);
  });

  it('honours an HTTP-date Retry-After', async () => {
    const { client, srv } = await clientFor((_req, res, _body, i) => {
      // HTTP-dates have whole-second precision: 2 s ahead is at least 1 s of wait.
      if (i === 0)
        sendJson(res, 429, errorBody('RATE_LIMITED', 'later'), {
          'Retry-After': new Date(Date.now() + 2000).toUTCString(),
        });
      else sendJson(res, 200, { data: [] });
    });
    expect(await client.listProgress()).toEqual([]);
    expect((srv.requests[1]?.at ?? 0) - (srv.requests[0]?.at ?? 0)).toBeGreaterThanOrEqual(980);
  });

  it('retries a GET on 503 but not a POST', async () => {
    const job = makeJob('created');
    const { client, srv } = await clientFor((req, res) => {
      const gets = srv.requests.filter((r) => r.method === 'GET').length;
      if (req.method === 'GET' && gets > 2) sendJson(res, 200, { data: job });
      else sendJson(res, 503, errorBody('SERVICE_UNAVAILABLE', 'busy'));
    });
    expect((await client.getJob(job.id)).id).toBe(job.id);
    expect(srv.requests.map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);

    const err = (await client.validateJob(job.id).catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(503);
    expect(srv.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it(
    'retries a GET and a retry-safe POST on network errors, then throws NetworkError; another POST is tried ' + 'once',
    async () => {
      const { client, srv } = await clientFor(
        (req) => {
          req.socket.destroy();
        },
        { maxRetries: 2 },
      );
      const getErr = await client.listJobs().catch((e: unknown) => e);
      expect(getErr).toBeInstanceOf(NetworkError);
      expect((getErr as NetworkError).timedOut).toBe(false);
      expect(srv.requests).toHaveLength(3);

      // A second upload target nobody uses expires: POST /uploads is retried like a GET.
      await expect(client.createUpload({ fileName: 'a.blend', fileType: 'blend' })).rejects.toBeInstanceOf(
        NetworkError,
      );
      expect(srv.requests).toHaveLength(6);
      // POST /jobs is not retry-safe, and a service that never answered gets no patience: one try.
      const before = srv.requests.length;
      await expect(client.createJob({ slug: 'up_x' })).rejects.toBeInstanceOf(NetworkError);
      expect(srv.requests.length - before).toBe(1);
    },
  );

  it('gives up an attempt after requestTimeoutMs with a timed-out NetworkError', async () => {
    // Never answers: only the client's timeout can end the call.
    const { client, srv } = await clientFor(() => undefined, { requestTimeoutMs: 150, maxRetries: 1 });
    const started = Date.now();
    const err = (await client.getJobProgress(makeJob('created').id).catch((e: unknown) => e)) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.timedOut).toBe(true);
    expect(srv.requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('stops a back-off pause when the caller aborts, with the abort reason', async () => {
    let arrived = false;
    const { client, srv } = await clientFor((_req, res) => {
      arrived = true;
      sendJson(res, 429, errorBody('RATE_LIMITED', 'x'), { 'Retry-After': '10' });
    });
    const controller = new AbortController();
    const reason = new Error('user gave up');
    // Abort as the pause begins, not after a fixed time (on a loaded machine 100 ms could pass before the
    // request even arrived): the pause is the first to listen for the caller's abort once the request is at
    // the server (sleep() in shared/client/backoff.ts; fetch's own listeners are added before it goes out).
    const { signal } = controller;
    const listen = signal.addEventListener.bind(signal);
    let pausedAt: number | undefined;
    signal.addEventListener = ((type: string, ...rest: [EventListener, AddEventListenerOptions?]) => {
      listen(type, ...rest);
      if (type !== 'abort' || !arrived || pausedAt !== undefined) return;
      pausedAt = Date.now();
      queueMicrotask(() => controller.abort(reason));
    }) as typeof signal.addEventListener;
    await expect(client.listJobs({}, { signal })).rejects.toBe(reason);
    // The pause would last 2 s (Retry-After 10 s, capped by maxDelayMs); it ended at the abort.
    expect(pausedAt).toBeDefined();
    expect(Date.now() - pausedAt!).toBeLessThan(2000);
    expect(srv.requests).toHaveLength(1);
  });
});
