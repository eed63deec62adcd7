// Dashboard sessions over real HTTP on every stack: an API key exchanged for an HttpOnly,
// SameSite=Strict cookie, the CSRF token every state-changing request needs with it, sign-out
// and expiry ending the session on the server, a revoked key ending its sessions at once, and a
// session never reaching another workspace.
import { describe, expect, it } from 'vitest';
import { SessionEnvelope } from '../../../shared/api/dashboard.js';
import { openKeyStore } from '../../../service/stack.js';
import { waitUntil } from '../../helpers/e2e.js';
import { createJob } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { startTestService, useTestService } from '../../helpers/service.js';
import { appOn } from '../dashboard/app-on.js';
import { signIn } from '../dashboard/session-client.js';

const served = useTestService();

/** Revokes the key made for `workspace` (as `renderbridge admin revoke-key` would). */
async function revokeKeysOf(workspace: string): Promise<void> {
  const store = await openKeyStore(served.svc.config);
  try {
    for (const k of await store.keys.listKeys(workspace)) await store.keys.revokeKey(k.id);
  } finally {
    await store.close();
  }
}

describe('signing in', () => {
  it(
    'exchanges a key in the body for an HttpOnly, SameSite=Strict cookie (not Secure over http) that then ' +
      'works for the API',
    async () => {
      const s = await signIn(served.svc.baseUrl, served.svc.apiKey);
      expect(s.setCookie).toMatch(/^rb_session=[A-Za-z0-9_-]{43}; /);
      const attrs = s.setCookie.split('; ').slice(1);
      expect(attrs).toEqual(expect.arrayContaining(['Path=/', 'HttpOnly', 'SameSite=Strict']));
      expect(attrs).not.toContain('Secure');
      expect(s.session.workspace).toEqual({ id: served.svc.workspaceId, name: 'studio' });
      expect(Date.parse(s.session.expiresAt)).toBeGreaterThan(Date.now());
      expect(Date.parse(s.session.maxExpiresAt)).toBeGreaterThanOrEqual(Date.parse(s.session.expiresAt));
      // The key is not in the answer: the browser never holds it after this request.
      expect(JSON.stringify(s.session)).not.toContain(served.svc.apiKey);
      expect((await s.call('GET', '/jobs')).status).toBe(200);
      const current = await s.call('GET', '/sessions/current');
      expect(current.status).toBe(200);
      expect(current.headers.get('cache-control')).toBe('no-store');
      expect(SessionEnvelope.parse(current.body).data.csrfToken).toBe(s.session.csrfToken);
      // Neither the key nor the session id reaches the log.
      const id = s.cookie.split('=')[1]!;
      expect(served.svc.logs.join('')).not.toContain(id);
      expect(served.svc.logs.join('')).not.toContain(served.svc.apiKey);
    },
  );

  it('also signs in with a Bearer key and no body', async () => {
    const r = await api(served.svc.baseUrl, served.svc.apiKey)('POST', '/sessions');
    expect(r.status).toBe(201);
    expect(r.headers.get('set-cookie')).toMatch(/^rb_session=/);
  });

  it('refuses a missing, unknown or revoked key with 401 and sets no cookie', async () => {
    const anon = api(served.svc.baseUrl, undefined);
    const revoked = await served.svc.createApiKey('revoked at sign-in');
    await revokeKeysOf('revoked at sign-in');
    for (const body of [{}, { apiKey: 'rb_live_' + 'A'.repeat(43) }, { apiKey: 'not a key' }, { apiKey: revoked }]) {
      const r = await anon('POST', '/sessions', body);
      expect(r.status, JSON.stringify(body)).toBe(401);
      expect(errorBody(r).name).toBe('UNAUTHORIZED');
      expect(r.headers.get('set-cookie')).toBeNull();
    }
    expect(errorBody(await anon('POST', '/sessions', { apiKey: served.svc.apiKey, extra: 1 })).name).toBe(
      'VALIDATION_ERROR',
    );
  });

  it('answers GET /sessions/current with 404 SESSION_NOT_FOUND to a Bearer key, 401 to no credentials', async () => {
    expect(errorBody(await api(served.svc.baseUrl, served.svc.apiKey)('GET', '/sessions/current')).name).toBe(
      'SESSION_NOT_FOUND',
    );
    expect((await api(served.svc.baseUrl, undefined)('GET', '/sessions/current')).status).toBe(401);
  });

  it('lets a Bearer header win over a cookie: a bad key next to a good cookie is 401', async () => {
    const s = await signIn(served.svc.baseUrl, served.svc.apiKey);
    const r = await s.call('GET', '/jobs', undefined, { headers: { authorization: 'Bearer rb_live_nope' } });
    expect(r.status).toBe(401);
  });
});

describe('CSRF', () => {
  it('refuses a state-changing request with the cookie but no or a wrong X-CSRF-Token (403), no change', async () => {
    const s = await signIn(served.svc.baseUrl, served.svc.apiKey);
    const job = await createJob(api(served.svc.baseUrl, served.svc.apiKey));
    for (const csrf of [undefined, 'x'.repeat(43), `${s.session.csrfToken}x`]) {
      const r = await s.call('POST', `/jobs/${job.id}/cancel`, undefined, { csrf });
      expect(r.status, String(csrf)).toBe(403);
      expect(errorBody(r).name).toBe('CSRF_TOKEN_INVALID');
    }
    // Another session's token is no good either.
    const other = await signIn(served.svc.baseUrl, served.svc.apiKey);
    expect((await s.call('POST', `/jobs/${job.id}/cancel`, undefined, { csrf: other.session.csrfToken })).status).toBe(
      403,
    );
    expect(((await s.call('GET', `/jobs/${job.id}`)).body as { data: { status: string } }).data.status).toBe('created');
    const ok = await s.call('POST', `/jobs/${job.id}/cancel`, undefined, { csrf: true });
    expect(ok.status).toBe(200);
    expect((ok.body as { status: string }).status).toBe('canceled');
  });

  it('needs no token with a Bearer key (browsers never add one on their own)', async () => {
    expect(
      (await api(served.svc.baseUrl, served.svc.apiKey)('POST', '/uploads', { fileName: 'a.blend', fileType: 'blend' }))
        .status,
    ).toBe(201);
  });
});

describe('ending sessions', () => {
  it('signs out on the server: the old cookie gets 401 afterwards; sign-out itself needs the CSRF token', async () => {
    const s = await signIn(served.svc.baseUrl, served.svc.apiKey);
    expect(errorBody(await s.call('DELETE', '/sessions/current')).name).toBe('CSRF_TOKEN_INVALID');
    const out = await s.call('DELETE', '/sessions/current', undefined, { csrf: true });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ data: { ended: true } });
    expect(out.headers.get('set-cookie')).toMatch(/^rb_session=; .*Max-Age=0/);
    const after = await s.call('GET', '/jobs');
    expect(after.status).toBe(401);
    expect(errorBody(after).metadata.session).toBe('unknown');
  });

  it('ends every session of a key the moment the key is revoked', async () => {
    const key = await served.svc.createApiKey('revoked while signed in');
    const s = await signIn(served.svc.baseUrl, key);
    expect((await s.call('GET', '/jobs')).status).toBe(200);
    await revokeKeysOf('revoked while signed in');
    const r = await s.call('GET', '/jobs');
    expect(r.status).toBe(401);
    expect(errorBody(r).metadata.session).toBe('revoked');
  });

  it('ends a session at its absolute expiry however busy it is', async () => {
    const short = await startTestService({ sessionMaxHours: 2 / 3600 });
    try {
      const s = await signIn(short.baseUrl, short.apiKey);
      expect(Date.parse(s.session.maxExpiresAt) - Date.now()).toBeLessThanOrEqual(2000);
      // Requests all along keep it from idling, but not past its end.
      const r = await waitUntil('the session to end', async () => {
        const a = await s.call('GET', '/jobs');
        return a.status === 401 ? a : undefined;
      });
      expect(errorBody(r).metadata.session).toBe('expired');
    } finally {
      await short.close();
    }
  });

  it('ends a session idle past the idle time, and keeps one in use alive (moved clock)', async () => {
    let now = Date.now();
    const moved = await appOn(served.svc, { clock: () => now });
    try {
      const idleMs = served.svc.config.sessionIdleMinutes * 60_000;
      const used = await signIn(moved.baseUrl, served.svc.apiKey);
      const idle = await signIn(moved.baseUrl, served.svc.apiKey);
      // `used` makes a request every third of the idle time; `idle` none.
      for (let i = 0; i < 4; i++) {
        now += idleMs / 3;
        expect((await used.call('GET', '/jobs')).status).toBe(200);
      }
      const r = await idle.call('GET', '/jobs');
      expect(r.status).toBe(401);
      expect(errorBody(r).metadata.session).toBe('idle');
      expect((await used.call('GET', '/jobs')).status).toBe(200);
    } finally {
      await moved.close();
    }
  });
});

describe('isolation and transport security', () => {
  it("shows a session only its own workspace: another workspace's job is a 404 and never listed", async () => {
    const rivalKey = await served.svc.createApiKey('rival');
    const rivalJob = await createJob(api(served.svc.baseUrl, rivalKey));
    const s = await signIn(served.svc.baseUrl, served.svc.apiKey);
    expect(errorBody(await s.call('GET', `/jobs/${rivalJob.id}`)).name).toBe('JOB_NOT_FOUND');
    expect(JSON.stringify((await s.call('GET', '/jobs?pageSize=100')).body)).not.toContain(rivalJob.id);
    expect(errorBody(await s.call('POST', `/jobs/${rivalJob.id}/cancel`, undefined, { csrf: true })).name).toBe(
      'JOB_NOT_FOUND',
    );
  });

  it('makes the cookie Secure and __Host- prefixed when the public URL is https (a TLS proxy in front)', async () => {
    const tls = await appOn(served.svc, { config: { ...served.svc.config, publicUrl: 'https://farm.example' } });
    try {
      const r = await api(tls.baseUrl, undefined)('POST', '/sessions', { apiKey: served.svc.apiKey });
      const setCookie = r.headers.get('set-cookie') ?? '';
      expect(setCookie).toMatch(/^__Host-rb_session=[A-Za-z0-9_-]{43}; /);
      expect(setCookie.split('; ')).toEqual(
        expect.arrayContaining(['Secure', 'HttpOnly', 'SameSite=Strict', 'Path=/']),
      );
      // The plain name means nothing to this service.
      const plain = await api(tls.baseUrl, undefined)('GET', '/jobs', undefined, {
        headers: { cookie: `rb_session=${setCookie.split(';')[0]!.split('=')[1]}` },
      });
      expect(plain.status).toBe(401);
      const ok = await api(tls.baseUrl, undefined)('GET', '/jobs', undefined, {
        headers: { cookie: setCookie.split(';')[0]! },
      });
      expect(ok.status).toBe(200);
    } finally {
      await tls.close();
    }
  });
});
