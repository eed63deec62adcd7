import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { API_KEY_PREFIX } from '../../../shared/constants.js';
import { createJob, newUpload, putBytes } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { startTestService, TEST_STACK, type TestService, useTestService } from '../../helpers/service.js';

const run = promisify(execFile);

const used = useTestService({ rateLimitMax: 1000 });
const { call } = used;

describe('authentication', () => {
  it.each([
    ['no header', () => undefined],
    ['wrong scheme', () => `Basic ${used.svc.apiKey}`],
    ['unknown key', () => `Bearer ${API_KEY_PREFIX}${'A'.repeat(43)}`],
    ['key with extra text', () => `Bearer ${used.svc.apiKey}x`],
    ['not a key', () => 'Bearer hello'],
    ['empty bearer', () => 'Bearer '],
  ])('refuses %s with 401 and the error body', async (_n, headerOf) => {
    const header = headerOf();
    const r = await fetch(`${used.svc.baseUrl}/jobs`, {
      headers: header !== undefined ? { authorization: header } : {},
    });
    expect(r.status).toBe(401);
    const e = errorBody({ status: r.status, headers: r.headers, body: await r.json() });
    expect(e.name).toBe('UNAUTHORIZED');
    expect(e.message).toContain('Authorization: Bearer');
  });

  it(
    'creates keys with the prefix and 256 bits, stores only their hash, and a revoked key gets 401 next',
    { timeout: 120_000 },
    async () => {
      const cli = ['--import', 'tsx', 'cli/index.ts'];
      const where = [
        '--data-dir',
        used.svc.dataDir,
        ...(used.svc.config.databaseUrl ? ['--database-url', used.svc.config.databaseUrl] : []),
      ];
      const created = await run('node', [
        ...cli,
        'admin',
        'create-key',
        ...where,
        '--workspace',
        'cli-ws',
        '--label',
        'from cli',
      ]);
      const key = created.stdout.trim().split('\n').at(-1)!;
      expect(key).toMatch(new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9_-]{43}$`));
      expect(Buffer.from(key.slice(API_KEY_PREFIX.length), 'base64url').length).toBe(32);

      const byKey = api(used.svc.baseUrl, key);
      expect((await byKey('GET', '/jobs')).status).toBe(200);

      for (const file of await storedState(used.svc)) {
        expect(file.includes(key)).toBe(false);
        expect(file.includes(used.svc.apiKey)).toBe(false);
      }

      const listed = JSON.parse(
        (await run('node', [...cli, 'admin', 'list-keys', '--json', '--workspace', 'cli-ws', ...where])).stdout,
      ) as { id: string; label: string }[];
      expect(listed.map((k) => k.label)).toEqual(['from cli']);
      expect(JSON.stringify(listed)).not.toContain(key);
      await run('node', [...cli, 'admin', 'revoke-key', listed[0]!.id, ...where]);
      const after = await byKey('GET', '/jobs');
      expect(after.status).toBe(401);
      expect(errorBody(after).name).toBe('UNAUTHORIZED');
      await expect(run('node', [...cli, 'admin', 'revoke-key', listed[0]!.id, ...where])).rejects.toMatchObject({
        code: 1,
      });
    },
  );

  it('never writes API keys or URL signatures to the log', async () => {
    const t = await newUpload(call);
    await putBytes(t.uploadUrl, Buffer.from('x'));
    await putBytes(t.uploadUrl, Buffer.from('again'));
    await fetch(`${used.svc.baseUrl}/jobs`, {
      headers: { authorization: `Bearer ${API_KEY_PREFIX}${'B'.repeat(43)}` },
    });
    const params = new URL(t.uploadUrl).searchParams;
    const sig = params.get('sig') ?? params.get('X-Amz-Signature')!;
    const logs = used.svc.logs.join('');
    // On the embedded stack the PUT itself reaches the service and is logged (redacted).
    if (TEST_STACK === 'embedded') expect(logs).toContain('/storage/');
    expect(logs).toContain('/uploads');
    expect(logs).not.toContain(sig);
    expect(logs).not.toContain(used.svc.apiKey);
    expect(logs).not.toContain('B'.repeat(43));
  });
});

/** Everything the service stored about keys: the SQLite files, or PostgreSQL's key table as text. */
async function storedState(s: TestService): Promise<Buffer[]> {
  if (s.config.databaseUrl) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: s.config.databaseUrl });
    await client.connect();
    try {
      const rows = (await client.query('select * from api_keys')).rows as Record<string, unknown>[];
      expect(rows.length).toBeGreaterThan(0);
      return [Buffer.from(JSON.stringify(rows, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('hex') : v)))];
    } finally {
      await client.end();
    }
  }
  const db = await readFile(path.join(s.dataDir, 'renderbridge.sqlite'));
  const wal = await readFile(path.join(s.dataDir, 'renderbridge.sqlite-wal')).catch(() => Buffer.alloc(0));
  return [db, wal];
}

describe('rate limiting', () => {
  it('answers 429 with Retry-After and the error body once a key exceeds its budget, per key', async () => {
    const limited = await startTestService({ rateLimitMax: 5, rateLimitWindowMs: 60_000 });
    try {
      const c = api(limited.baseUrl, limited.apiKey);
      const answers = [];
      for (let i = 0; i < 7; i++) answers.push(await c('GET', '/jobs'));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429, 429]);
      // Every answer says how much of the budget is left, and when it is full again.
      expect(answers.map((a) => a.headers.get('x-ratelimit-remaining'))).toEqual(['4', '3', '2', '1', '0', '0', '0']);
      expect(answers.every((a) => a.headers.get('x-ratelimit-limit') === '5')).toBe(true);
      expect(Number(answers[6]!.headers.get('x-ratelimit-reset'))).toBeGreaterThan(50);
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
    const other = api(used.svc.baseUrl, await used.svc.createApiKey('isolated'));
    const theirs = await other('GET', '/jobs/progress');
    expect(theirs.body).toEqual({ data: [] });
    const theirList = (await other('GET', '/jobs')).body as { jobs: unknown[] };
    expect(theirList.jobs).toEqual([]);
    const mine = (await call('GET', '/jobs/progress')).body as { data: { jobId: string }[] };
    expect(mine.data.map((p) => p.jobId)).toContain(job.id);
  });
});
