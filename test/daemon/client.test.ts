// The typed DaemonClient (shared/daemon/client.ts) against a real daemon and real local servers:
// answers parsed with the contract's schemas, the daemon's error bodies as DaemonClientError,
// no answer / a wrong answer / no answer in time as the client's own registry names, and the
// GET /events stream read with the contract's frame parser.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findLiveDaemon, newToken, writeStateFile } from '../../daemon/state-file.js';
import { DaemonClient, DaemonClientError } from '../../shared/daemon/client.js';
import { EventFrameSplitter, parseEventFrame } from '../../shared/daemon/client-events.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startTestDaemon, type TestDaemon } from './harness.js';

let svc: TestService;
let td: TestDaemon;
let client: DaemonClient;
const servers: Server[] = [];

beforeAll(async () => {
  svc = await startTestService();
  td = await startTestDaemon({ serviceUrl: svc.baseUrl }, { apiKey: svc.apiKey });
  client = new DaemonClient({ origin: td.daemon.origin, token: td.daemon.token });
});
afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  await td?.close();
  await svc?.close();
});

/** A real local HTTP server that is not a daemon (answers what `handler` writes). */
async function otherServer(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function failure(p: Promise<unknown>): Promise<DaemonClientError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DaemonClientError);
  return err as DaemonClientError;
}

describe('DaemonClient', () => {
  it('reads health, jobs and submissions parsed with the route schemas', async () => {
    expect(await client.health()).toMatchObject({
      status: 'ok',
      version: '9.8.7-test',
      apiKeyConfigured: true,
      apiKeySource: 'env',
    });
    expect(await client.listJobs()).toEqual({ jobs: expect.any(Array) });
    expect(await client.listSubmissions()).toEqual({ submissions: [] });
  });

  it("throws the daemon's error body with its status and name", async () => {
    const wrongToken = new DaemonClient({ origin: td.daemon.origin, token: newToken() });
    const unauthorized = await failure(wrongToken.health());
    expect([unauthorized.status, unauthorized.code]).toEqual([401, 'DAEMON_UNAUTHORIZED']);
    const missing = await failure(client.getSubmission('no-such-submission'));
    expect([missing.status, missing.code]).toEqual([404, 'DAEMON_NOT_FOUND']);
    expect(missing.message).toContain('no-such-submission');
    const bad = await failure(client.getJob('not-a-uuid'));
    expect([bad.status, bad.code, bad.body.type]).toEqual([400, 'DAEMON_BAD_REQUEST', 'zod']);
    // An id with a slash stays one path segment (encoded), so it reaches the job route, not another one.
    const slash = await failure(client.cancelJob('a/b'));
    expect(slash.code).toBe('DAEMON_BAD_REQUEST');
  });

  it('names no answer, an off-contract answer and a silent server with its own registry', async () => {
    const gone = await otherServer(() => {});
    const port = Number(new URL(gone).port);
    const closed = servers.pop()!;
    await new Promise((r) => closed.close(r));
    const unreachable = await failure(new DaemonClient({ origin: `http://127.0.0.1:${port}`, token: 'x' }).health());
    expect([unreachable.status, unreachable.code]).toEqual([0, 'DAEMON_UNREACHABLE']);
    expect(unreachable.message).toContain('renderbridge daemon');

    const imposter = await otherServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}'),
    );
    const off = await failure(new DaemonClient({ origin: imposter, token: 'x' }).health());
    expect([off.status, off.code]).toEqual([200, 'DAEMON_BAD_RESPONSE']);
    const html = await otherServer((_req, res) =>
      res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>oops</h1>'),
    );
    expect((await failure(new DaemonClient({ origin: html, token: 'x' }).listJobs())).code).toBe('DAEMON_BAD_RESPONSE');

    // Never answers: the limit is what ends the call (the server holds the request forever).
    const silent = await otherServer(() => {});
    const late = await failure(new DaemonClient({ origin: silent, token: 'x', timeoutMs: 300 }).health());
    expect([late.status, late.code]).toEqual([0, 'DAEMON_TIMEOUT']);
  });

  it('counts a state file whose port answers 200 with something other than Health as stale', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'rb-client-state-'));
    try {
      const imposter = await otherServer((_req, res) =>
        res.writeHead(200, { 'content-type': 'text/plain' }).end('fine'),
      );
      const state = {
        version: 1 as const,
        pid: process.pid,
        port: Number(new URL(imposter).port),
        token: newToken(),
        startedAt: new Date().toISOString(),
        daemonVersion: 'x',
      };
      await writeStateFile(dir, state);
      expect(await findLiveDaemon(dir)).toBeNull();
      await writeStateFile(dir, { ...state, port: td.daemon.port, token: td.daemon.token });
      expect(await findLiveDaemon(dir)).toMatchObject({ port: td.daemon.port });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('opens GET /events and reads its frames with the contract parser', async () => {
    const abort = new AbortController();
    const res = await client.openEvents(abort.signal);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const splitter = new EventFrameSplitter();
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    const frames = splitter.push(first.value!);
    // The daemon opens with its reconnect delay and a comment: no event yet.
    expect(frames[0]).toEqual({ retryMs: 2000 });
    abort.abort();
    const denied = await failure(new DaemonClient({ origin: td.daemon.origin, token: newToken() }).openEvents());
    expect(denied.status).toBe(401);
  });
});

describe('parseEventFrame', () => {
  it('parses a known event with its schema and reports bad frames', () => {
    const download = {
      jobId: 'j',
      outDir: '/o',
      state: 'pending',
      files: 0,
      filesDone: 0,
      bytes: 0,
      bytesDone: 0,
      skipped: 0,
      error: null,
    };
    expect(parseEventFrame(`event: download\ndata: ${JSON.stringify(download)}`).event).toEqual({
      event: 'download',
      data: { ...download, refused: [] },
    });
    expect(parseEventFrame('event: download\ndata: {nope')).toEqual({ problem: 'a download event was not JSON' });
    expect(parseEventFrame('event: download\ndata: {}')).toEqual({
      problem: 'a download event did not match its schema',
    });
    // Names outside DAEMON_EVENTS (even ones every object has) are ignored, not looked up.
    expect(parseEventFrame('event: toString\ndata: {}')).toEqual({});
    expect(parseEventFrame(': heartbeat')).toEqual({});
  });
});
