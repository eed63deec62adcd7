import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_PREFIX } from '../../shared/constants.js';
import { createJob, newUpload, putBytes, type Call } from '../helpers/flow.js';
import { api, errorBody } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

const run = promisify(execFile);
let svc: TestService;
let call: Call;

beforeAll(async () => {
  svc = await startTestService({ rateLimitMax: 1000 });
  call = api(svc.baseUrl, svc.apiKey);
});
afterAll(() => svc.close());

describe('authentication', () => {
  it.each([
    ['no header', () => undefined],
    ['wrong scheme', () => `Basic ${svc.apiKey}`],
    ['unknown key', () => `Bearer ${API_KEY_PREFIX}${'A'.repeat(43)}`],
    ['key with extra text', () => `Bearer ${svc.apiKey}x`],
    ['not a key', () => 'Bearer hello'],
    ['empty bearer', () => 'Bearer '],
  ])('refuses %s with 401 and the error body', async (_n, headerOf) => {
    const header = headerOf();
    const r = await fetch(`${svc.baseUrl}/jobs`, { headers: header !== undefined ? { authorization: header } : {} });
    expect(r.status).toBe(401);
    const e = errorBody({ status: r.status, headers: r.headers, body: await r.json() });
    expect(e.name).toBe('UNAUTHORIZED');
    expect(e.message).toContain('Authorization: Bearer');
  });

  it('creates keys with the prefix and 256 bits, stores only their hash, and a revoked key gets 401 next', async () => {
    const cli = ['--import', 'tsx', 'cli/index.ts'];
    const created = await run('node', [...cli, 'admin', 'create-key', '--data-dir', svc.dataDir, '--workspace', 'cli-ws', '--label', 'from cli']);
    const key = created.stdout.trim().split('\n').at(-1)!;
    expect(key).toMatch(new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9_-]{43}$`));
    expect(Buffer.from(key.slice(API_KEY_PREFIX.length), 'base64url').length).toBe(32);

    const byKey = api(svc.baseUrl, key);
    expect((await byKey('GET', '/jobs')).status).toBe(200);

    const db = await readFile(path.join(svc.dataDir, 'renderbridge.sqlite'));
    const wal = await readFile(path.join(svc.dataDir, 'renderbridge.sqlite-wal')).catch(() => Buffer.alloc(0));
    for (const file of [db, wal]) {
      expect(file.includes(key)).toBe(false);
      expect(file.includes(svc.apiKey)).toBe(false);
    }

    const listed = JSON.parse((await run('node', [...cli, 'admin', 'list-keys', '--json', '--workspace', 'cli-ws', '--data-dir', svc.dataDir])).stdout) as { id: string; label: string }[];
    expect(listed.map((k) => k.label)).toEqual(['from cli']);
    expect(JSON.stringify(listed)).not.toContain(key);
    await run('node', [...cli, 'admin', 'revoke-key', listed[0]!.id, '--data-dir', svc.dataDir]);
    const after = await byKey('GET', '/jobs');
    expect(after.status).toBe(401);
    expect(errorBody(after).name).toBe('UNAUTHORIZED');
    await expect(run('node', [...cli, 'admin', 'revoke-key', listed[0]!.id, '--data-dir', svc.dataDir])).rejects.toMatchObject({ code: 1 });
  });

  it('never writes API keys or URL signatures to the log', async () => {
    const t = await newUpload(call);
    await putBytes(t.uploadUrl, Buffer.from('x'));
    await putBytes(t.uploadUrl, Buffer.from('again'));
    await fetch(`${svc.baseUrl}/jobs`, { headers: { authorization: `Bearer ${API_KEY_PREFIX}${'B'.repeat(43)}` } });
    const sig = new URL(t.uploadUrl).searchParams.get('sig')!;
    const logs = svc.logs.join('');
    expect(logs).toContain('/storage/');
    expect(logs).not.toContain(sig);
    expect(logs).not.toContain(svc.apiKey);
    expect(logs).not.toContain('B'.repeat(43));
  });
});

describe('rate limiting', () => {
  it('answers 429 with Retry-After and the error body once a key exceeds its budget, per key', async () => {
    const limited = await startTestService({ rateLimitMax: 5, rateLimitWindowMs: 60_000 });
    try {
      const c = api(limited.baseUrl, limited.apiKey);
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await c('GET', '/jobs')).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
      const r = await c('GET', '/jobs');
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      const e = errorBody(r);
      expect(e.name).toBe('RATE_LIMITED');
      expect(e.metadata.retryAfterSeconds).toBeGreaterThan(0);
      // Another key has its own budget.
      const other = api(limited.baseUrl, await limited.createApiKey('other'));
      expect((await other('GET', '/jobs')).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('workspace isolation', () => {
  it('keeps progress lists and job lists per workspace', async () => {
    const job = await createJob(call);
    await call('POST', `/jobs/${job.id}/validate`, {});
    const other = api(svc.baseUrl, await svc.createApiKey('isolated'));
    const theirs = await other('GET', '/jobs/progress');
    expect(theirs.body).toEqual({ data: [] });
    const theirList = (await other('GET', '/jobs')).body as { jobs: unknown[] };
    expect(theirList.jobs).toEqual([]);
    const mine = (await call('GET', '/jobs/progress')).body as { data: { jobId: string }[] };
    expect(mine.data.map((p) => p.jobId)).toContain(job.id);
  });
});
