// `renderbridge doctor` against real parts: this machine's Blender, EEVEE and ffmpeg, a real
// service (clock), PostgreSQL (migrated and not), Redis (with and without eviction), s3rver
// (right and wrong bucket), and the CLI on a PATH without Blender.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../cli/doctor/doctor.js';
import type { CheckResult } from '../../cli/doctor/check.js';
import { usableBuilds } from '../helpers/blender-builds.js';
import { runCli } from '../helpers/cli-run.js';
import { createTestDatabase, requirePostgres } from '../helpers/postgres.js';
import { startThrowawayRedis, type ThrowawayRedis } from '../helpers/redis.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { startTestService, type TestService } from '../helpers/service.js';

const byName = (results: CheckResult[], name: string) => results.filter((r) => r.name === name);
const one = (results: CheckResult[], name: string) => {
  const found = byName(results, name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
};
const base = { blender: [] as string[], eevee: false, queuePrefix: 'renderbridge' };

let svc: TestService;
let s3: TestS3;
let redis: ThrowawayRedis;
let skewed: Server;
let skewedUrl: string;

beforeAll(async () => {
  svc = await startTestService();
  s3 = await startS3();
  redis = await startThrowawayRedis();
  // A service whose clock is an hour ahead.
  skewed = createServer((_req, res) => {
    res.sendDate = false;
    res.setHeader('date', new Date(Date.now() + 3600_000).toUTCString());
    res.end('{"status":"ok"}');
  });
  await new Promise<void>((r) => skewed.listen(0, '127.0.0.1', r));
  skewedUrl = `http://127.0.0.1:${(skewed.address() as { port: number }).port}`;
}, 60_000);

afterAll(async () => {
  await svc?.close();
  await s3?.close();
  await redis?.stop();
  skewed?.close();
});

describe('renderbridge doctor with builds of every kind', () => {
  it('says when the sandbox is off, with what to do', async () => {
    const results = await runDoctor({ ...base, sandbox: false });
    expect(one(results, 'sandbox')).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/^OFF \(--no-sandbox\)/),
      fix: expect.stringMatching(/Drop --no-sandbox/),
    });
  });

  const roots = usableBuilds('doctor on Blender roots').filter((b) => b.kind === 'root');
  it.skipIf(roots.length === 0)(
    'lists each root with its version, its kind and its denoiser',
    { timeout: 120_000 },
    async () => {
      const results = await runDoctor({ ...base, blender: roots.map((r) => r.path) });
      const lines = byName(results, 'blender').map((r) => `${r.status} ${r.detail}`);
      for (const r of roots) {
        const line = lines.find((l) => l.includes(` at ${r.path} (system root, run in bubblewrap)`));
        expect(line, lines.join('\n')).toMatch(new RegExp(`^warn ${r.minor.replace('.', '\\.')}\\.\\d+ at `));
        // Debian's builds have no OpenImageDenoise: said, with what to do.
        expect(line).toMatch(/denoiser: no/);
      }
    },
  );
});

describe('renderbridge doctor', () => {
  it(
    'finds this machine ready for the service it names: Blender with its devices, EEVEE, ffmpeg, disk, ' +
      'database, clock',
    async () => {
      const results = await runDoctor({ ...base, eevee: true, dataDir: svc.dataDir, serviceUrl: svc.baseUrl });
      expect(byName(results, 'blender')[0]).toMatchObject({
        detail: expect.stringMatching(/^\d+\.\d+\.\d+ at .*blender.*Cycles GPU backends: /),
      });
      expect(one(results, 'eevee')).toMatchObject({ status: 'ok' });
      expect(one(results, 'sandbox')).toMatchObject({
        status: 'ok',
        detail: expect.stringMatching(/bubblewrap: no network/),
      });
      expect(one(results, 'ffmpeg')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/libx264/) });
      expect(one(results, 'gpus').status).toMatch(/ok|warn/);
      expect(one(results, 'disk')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/GiB free/) });
      expect(one(results, 'database')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/SQLite/) });
      expect(one(results, 'clock')).toMatchObject({ status: 'ok' });
      expect(results.filter((r) => r.status === 'fail')).toEqual([]);
    },
    180_000,
  );

  it('fails a clock an hour off, and a disk below the free space tasks need, saying what to do', async () => {
    const results = await runDoctor({ ...base, dataDir: tmpdir(), serviceUrl: skewedUrl, minFreeDisk: 2 ** 60 });
    expect(one(results, 'clock')).toMatchObject({
      status: 'fail',
      fix: expect.stringMatching(/Synchronise the clocks/),
    });
    expect(Math.abs(Number(/^(-?\d+) ms/.exec(one(results, 'clock').detail)![1]))).toBeGreaterThan(3_500_000);
    expect(one(results, 'disk')).toMatchObject({ status: 'fail', fix: expect.stringMatching(/--min-free-disk/) });
  }, 120_000);

  it('checks S3 by writing, reading and deleting an object, and names a missing bucket', async () => {
    Object.assign(process.env, s3.env);
    const good = await runDoctor({ ...base, s3Bucket: s3.settings.bucket, s3Endpoint: s3.settings.endpoint! });
    expect(one(good, 's3')).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/write, read and delete work/),
    });
    const bad = await runDoctor({ ...base, s3Bucket: 'no-such-bucket', s3Endpoint: s3.settings.endpoint! });
    expect(one(bad, 's3')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/no-such-bucket/),
      fix: expect.stringMatching(/bucket name/),
    });
  }, 120_000);

  it('accepts Redis that keeps every key and warns when it may evict queued tasks', async () => {
    expect(one(await runDoctor({ ...base, redisUrl: redis.url }), 'redis')).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/noeviction/),
    });
    const admin = new Redis(redis.url);
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    admin.disconnect();
    expect(one(await runDoctor({ ...base, redisUrl: redis.url }), 'redis')).toMatchObject({
      status: 'warn',
      fix: expect.stringMatching(/noeviction/),
    });
    expect(one(await runDoctor({ ...base, redisUrl: 'redis://127.0.0.1:1' }), 'redis')).toMatchObject({
      status: 'fail',
    });
  }, 120_000);

  it('accepts a migrated PostgreSQL database and refuses one the service never set up', async () => {
    if (!(await requirePostgres('doctor database check'))) return;
    const migrated = await createTestDatabase();
    const empty = await createTestDatabase({ empty: true });
    try {
      expect(one(await runDoctor({ ...base, databaseUrl: migrated.url }), 'database')).toMatchObject({ status: 'ok' });
      expect(one(await runDoctor({ ...base, databaseUrl: empty.url }), 'database')).toMatchObject({
        status: 'fail',
        fix: expect.stringMatching(/start the service once/),
      });
    } finally {
      await migrated.drop();
      await empty.drop();
    }
  }, 120_000);

  it('exits 1 with the findings as JSON when Blender is not installed', async () => {
    // The CLI starts from process.execPath; an empty folder as PATH hides /usr/bin's blender.
    const emptyPath = await mkdtemp(path.join(tmpdir(), 'rb-doctor-path-'));
    const r = await runCli(['doctor', '--json', '--no-eevee', '--data-dir', path.join(tmpdir(), 'rb-doctor-none')], {
      PATH: emptyPath,
      HOME: tmpdir(),
    });
    await rm(emptyPath, { recursive: true, force: true });
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as { ok: boolean; checks: CheckResult[] };
    expect(doc.ok).toBe(false);
    expect(one(doc.checks, 'blender')).toMatchObject({
      status: 'fail',
      fix: expect.stringMatching(/apt install blender/),
    });
  }, 120_000);
});
