// /readyz against real engines failing one at a time: a service on PostgreSQL, a throwaway Redis
// (BullMQ queue), s3rver and its in-process worker (real Blender) is ready; with Redis killed it
// answers 503 naming the queue, ready again once Redis is back; with s3rver stopped, 503 naming
// storage; with its database dropped, 503 naming the database. /healthz answers 200 throughout.
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../../shared/api/error-body.js';
import { waitUntil } from '../../helpers/e2e.js';
import { createTestDatabase, requirePostgres } from '../../helpers/postgres.js';
import { requireRedisServer, startThrowawayRedis, type ThrowawayRedis } from '../../helpers/redis.js';
import { startS3, type TestS3 } from '../../helpers/s3.js';
import { startTestService, type TestService } from '../../helpers/service.js';

const hasBlender = spawnSync('sh', ['-c', 'command -v blender']).status === 0;
if (!hasBlender) {
  if (process.env.CI === 'true')
    throw new Error('the /readyz fault test needs blender (Debian: apt-get install blender)');
  console.warn('skipping the /readyz fault test: blender missing (Debian: apt-get install blender)');
}
const ready =
  hasBlender && (await requirePostgres('the /readyz fault test')) && requireRedisServer('the /readyz fault test');

let redis: ThrowawayRedis | undefined;
let s3: TestS3 | undefined;
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let svc: TestService | undefined;
afterAll(async () => {
  await svc?.close().catch(() => undefined);
  await s3?.close().catch(() => undefined);
  await redis?.stop();
  await db?.drop();
});

/** The failed checks of a 503, or [] for a 200. */
async function failedChecks(origin: string): Promise<string[]> {
  const res = await fetch(`${origin}/readyz`);
  const body = (await res.json()) as ErrorBody | { status: string };
  if (res.status === 200) {
    expect(body).toMatchObject({ status: 'ready' });
    return [];
  }
  expect(res.status).toBe(503);
  const err = body as ErrorBody;
  expect(err.name).toBe('SERVICE_NOT_READY');
  // Says which part and what to do, never the URLs (which may carry passwords).
  for (const d of err.details) expect(d.message).toMatch(/check|start/);
  expect(JSON.stringify(err)).not.toMatch(/redis:\/\/|postgres:\/\/|127\.0\.0\.1/);
  return err.details.map((d) => String(d.path[0]));
}

describe.skipIf(!ready)('/readyz with engines failing', () => {
  it('names the queue, storage and database when each stops answering', async () => {
    redis = await startThrowawayRedis();
    s3 = await startS3();
    db = await createTestDatabase();
    process.env.AWS_ACCESS_KEY_ID ??= s3.env.AWS_ACCESS_KEY_ID;
    process.env.AWS_SECRET_ACCESS_KEY ??= s3.env.AWS_SECRET_ACCESS_KEY;
    svc = await startTestService({
      databaseUrl: db.url,
      redisUrl: redis.url,
      s3: s3.settings,
      workers: 1,
      worker: { heartbeat: { intervalMs: 500 } },
    });
    const origin = svc.origin;
    await waitUntil(
      'the service to be ready',
      async () => ((await failedChecks(origin)).length === 0 ? true : undefined),
      { timeoutMs: 30_000 },
    );

    await redis.down();
    expect(
      await waitUntil(
        '/readyz to name the queue',
        async () => {
          const failed = await failedChecks(origin);
          return failed.includes('queue') ? failed : undefined;
        },
        { timeoutMs: 30_000 },
      ),
    ).toEqual(['queue']);
    expect((await fetch(`${origin}/healthz`)).status).toBe(200);
    await redis.restart();
    await waitUntil(
      'ready again with Redis back',
      async () => ((await failedChecks(origin)).length === 0 ? true : undefined),
      { timeoutMs: 30_000 },
    );

    await s3.close();
    s3 = undefined;
    expect(
      await waitUntil(
        '/readyz to name storage',
        async () => {
          const failed = await failedChecks(origin);
          return failed.includes('storage') ? failed : undefined;
        },
        { timeoutMs: 30_000 },
      ),
    ).toEqual(['storage']);

    await db.drop();
    db = undefined;
    const failed = await waitUntil(
      '/readyz to name the database',
      async () => {
        const f = await failedChecks(origin);
        return f.includes('database') ? f : undefined;
      },
      { timeoutMs: 30_000 },
    );
    // The worker registry lives in the database too.
    expect(failed).toEqual(['database', 'storage', 'workers']);
    expect((await fetch(`${origin}/healthz`)).status).toBe(200);
  }, 180_000);
});
