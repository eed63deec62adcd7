// The daemon's front door over real HTTP (node:http and curl): the token, the Origin and Host
// checks (the daemon's own origin, the job window's, is the only one allowed), 127.0.0.1 only,
// the job window's static files, and GET /health telling the version and whether a key is set.
import { execFile } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStateFile } from '../../daemon/state-file.js';
import { ErrorBody } from '../../shared/api/error-body.js';
import { Health } from '../../shared/daemon/api.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { rawRequest, startTestDaemon, type TestDaemon } from './harness.js';

const run = promisify(execFile);

let svc: TestService;
let td: TestDaemon;

beforeAll(async () => {
  svc = await startTestService();
  td = await startTestDaemon({ serviceUrl: svc.baseUrl }, { apiKey: svc.apiKey });
});
afterAll(async () => {
  await td?.close();
  await svc?.close();
});

/** curl with a given Host header; answers status and body. */
async function curl(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const args = ['-s', '-o', '-', '-w', '\n%{http_code}'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  const { stdout } = await run('curl', [...args, url]);
  const cut = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

function errorName(json: unknown): string {
  return ErrorBody.parse(json).name;
}

describe('daemon guard', () => {
  it("answers /health to the state file's token with the version and whether a key is set, never the key", async () => {
    const { state } = await readStateFile(td.stateDir);
    expect(state?.port).toBe(td.daemon.port);
    const res = await rawRequest(`${td.daemon.origin}/health`, {
      headers: { authorization: `Bearer ${state!.token}` },
    });
    expect(res.status).toBe(200);
    const health = Health.parse(res.json);
    expect(health).toMatchObject({
      status: 'ok',
      version: '9.8.7-test',
      apiKeyConfigured: true,
      apiKeySource: 'env',
      serviceUrl: svc.baseUrl,
      pid: process.pid,
    });
    expect(res.text).not.toContain(svc.apiKey);
    expect(res.text).not.toContain(td.daemon.token);
  });

  it('refuses a missing or wrong token with 401 DAEMON_UNAUTHORIZED', async () => {
    const url = `${td.daemon.origin}/health`;
    const missing = await rawRequest(url);
    expect(missing.status).toBe(401);
    expect(errorName(missing.json)).toBe('DAEMON_UNAUTHORIZED');
    const flipped = td.daemon.token.slice(0, -1) + (td.daemon.token.endsWith('A') ? 'B' : 'A');
    for (const authorization of [
      `Bearer ${flipped}`,
      'Bearer short',
      `Basic ${td.daemon.token}`,
      `Bearer ${td.daemon.token}x`,
      'Bearer ',
    ]) {
      const res = await rawRequest(url, { headers: { authorization } });
      expect(res.status, authorization).toBe(401);
      expect(errorName(res.json)).toBe('DAEMON_UNAUTHORIZED');
    }
    // Every route, the SSE stream and unknown paths included: nothing is revealed without the token.
    for (const [method, p] of [
      ['GET', '/jobs'],
      ['GET', '/events'],
      ['POST', '/pack'],
      ['GET', '/no-such-route'],
    ] as const) {
      const res = await rawRequest(`${td.daemon.origin}${p}`, { method });
      expect(res.status, p).toBe(401);
    }
  });

  it('checks the token before it refuses a path the router cannot read, then answers 400, an error body', async () => {
    // A stray % and an overlong id are refused by fastify's router, before the usual hooks run.
    for (const p of ['/jobs/%zz', '/jobs/%', `/jobs/${'a'.repeat(3000)}`, '/submissions/%E0%A4%A']) {
      const anonymous = await rawRequest(`${td.daemon.origin}${p}`);
      expect(anonymous.status, p).toBe(401);
      expect(errorName(anonymous.json), p).toBe('DAEMON_UNAUTHORIZED');
      const foreign = await rawRequest(`${td.daemon.origin}${p}`, {
        headers: { authorization: `Bearer ${td.daemon.token}`, origin: 'https://evil.example' },
      });
      expect(foreign.status, p).toBe(403);
      const res = await rawRequest(`${td.daemon.origin}${p}`, {
        headers: { authorization: `Bearer ${td.daemon.token}` },
      });
      expect(res.status, p).toBe(400);
      const body = ErrorBody.parse(res.json);
      expect(body.name, p).toBe('DAEMON_BAD_REQUEST');
      expect(body.metadata.requestId, p).toBe(res.headers['x-request-id']);
    }
  });

  it('refuses a foreign Origin with 403, even with the right token, and accepts its own (the job window)', async () => {
    const port = td.daemon.port;
    const foreign = [
      'http://evil.example',
      'null',
      `http://127.0.0.1:${port + 1}`,
      `http://localhost:${port + 1}`,
      `https://127.0.0.1:${port}`,
      `http://127.0.0.1.evil.example:${port}`,
      'http://127.0.0.1',
      `http://[::1]:${port}`,
      'not a url',
    ];
    for (const origin of foreign) {
      const res = await rawRequest(`${td.daemon.origin}/health`, {
        headers: { authorization: `Bearer ${td.daemon.token}`, origin },
      });
      expect(res.status, origin).toBe(403);
      expect(errorName(res.json)).toBe('DAEMON_FORBIDDEN_ORIGIN');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      // The job window's files are refused to a foreign origin too, and a preflight gets no CORS grant.
      expect((await rawRequest(`${td.daemon.origin}/ui/app.js`, { headers: { origin } })).status, origin).toBe(403);
      const preflight = await rawRequest(`${td.daemon.origin}/jobs`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      });
      expect(preflight.status).toBe(403);
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    }
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const ok = await rawRequest(`${td.daemon.origin}/health`, {
        headers: { authorization: `Bearer ${td.daemon.token}`, origin },
      });
      expect(ok.status, origin).toBe(200);
      // Its own origin still needs the token for data.
      const noToken = await rawRequest(`${td.daemon.origin}/jobs`, { headers: { origin } });
      expect(noToken.status, origin).toBe(401);
    }
  });

  it("serves the job window's files (they hold no data) without the token under a strict CSP; no more", async () => {
    const page = await rawRequest(`${td.daemon.origin}/ui/`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('<script src="app.js" defer></script>');
    expect(page.text).not.toMatch(/<script>|<script [^>]*>[^<]/);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toMatch(/^default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' /);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe');
    expect(page.text).not.toContain(td.daemon.token);
    for (const [file, type] of [
      ['app.js', /^text\/javascript/],
      ['transfer.js', /^text\/javascript/],
      ['app.css', /^text\/css/],
    ] as const) {
      const res = await rawRequest(`${td.daemon.origin}/ui/${file}`);
      expect(res.status, file).toBe(200);
      expect(res.headers['content-type']).toMatch(type);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    const redirect = await rawRequest(`${td.daemon.origin}/ui`);
    expect(redirect.status).toBe(302);
    expect(redirect.headers.location).toBe('/ui/');
    // Unknown files are 404; other methods under /ui and every data route still need the token.
    expect((await rawRequest(`${td.daemon.origin}/ui/../jobs`)).status).not.toBe(200);
    expect((await rawRequest(`${td.daemon.origin}/ui/secret.json`)).status).toBe(404);
    expect((await rawRequest(`${td.daemon.origin}/ui/app.js`, { method: 'POST' })).status).toBe(401);
    expect((await rawRequest(`${td.daemon.origin}/uix`)).status).toBe(401);
    // A foreign Host (DNS rebinding) gets nothing, files included.
    expect((await curl(`${td.daemon.origin}/ui/`, { Host: 'evil.example' })).status).toBe(403);
  });

  it('refuses a foreign Host with 403 and accepts 127.0.0.1 and localhost (curl)', async () => {
    const url = `${td.daemon.origin}/health`;
    const auth = { Authorization: `Bearer ${td.daemon.token}` };
    for (const host of [
      'evil.example',
      `evil.example:${td.daemon.port}`,
      `localhost.evil.example:${td.daemon.port}`,
      `127.0.0.1:${td.daemon.port + 1}`,
      '10.0.0.1',
    ]) {
      const res = await curl(url, { ...auth, Host: host });
      expect(res.status, host).toBe(403);
      expect(errorName(JSON.parse(res.body))).toBe('DAEMON_FORBIDDEN_ORIGIN');
    }
    for (const host of [`127.0.0.1:${td.daemon.port}`, `localhost:${td.daemon.port}`, 'localhost', 'LOCALHOST']) {
      const res = await curl(url, { ...auth, Host: host });
      expect(res.status, host).toBe(200);
      expect(Health.parse(JSON.parse(res.body)).apiKeyConfigured).toBe(true);
    }
    // curl's own defaults (Host 127.0.0.1:PORT, no Origin) with the token: accepted; without: 401.
    expect((await curl(url, auth)).status).toBe(200);
    expect((await curl(url, {})).status).toBe(401);
  });

  it('listens on 127.0.0.1 only', async () => {
    const addr = td.daemon.app.server.address();
    expect(addr).toMatchObject({ address: '127.0.0.1', port: td.daemon.port });
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal);
    if (external) {
      const refused = await new Promise<string>((resolve) => {
        const s = connect({ host: external.address, port: td.daemon.port });
        s.on('connect', () => {
          s.destroy();
          resolve('connected');
        });
        s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      });
      expect(refused).toBe('ECONNREFUSED');
    }
  });

  it('says when no API key is configured', async () => {
    const bare = await startTestDaemon({ serviceUrl: svc.baseUrl });
    try {
      const res = await rawRequest(`${bare.daemon.origin}/health`, {
        headers: { authorization: `Bearer ${bare.daemon.token}` },
      });
      expect(Health.parse(res.json)).toMatchObject({ apiKeyConfigured: false, apiKeySource: null });
      // The daemon's own token does not open another daemon.
      const other = await rawRequest(`${bare.daemon.origin}/health`, {
        headers: { authorization: `Bearer ${td.daemon.token}` },
      });
      expect(other.status).toBe(401);
    } finally {
      await bare.close();
    }
  });
});
