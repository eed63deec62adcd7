// Two service instances on one PostgreSQL database, Redis and bucket behave as one service: keys
// and revokes, jobs, the rate-limit budget, and scheduled work (the retention sweep) run once.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETENTION_LEASE, RetentionSweeper } from '../../../service/retention.js';
import { createJob } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { requirePostgres } from '../../helpers/postgres.js';
import { requireRedis } from '../../helpers/redis.js';
import { TEST_STACK, startTestService, type TestService } from '../../helpers/service.js';

const ready =
  TEST_STACK === 'scale'
    ? (await requirePostgres('Shared-state tests')) && (await requireRedis('Shared-state tests')) !== undefined
    : (console.warn(
        'shared-state tests run in the api-on-scale-stack project only (two instances need PostgreSQL, Redis and S3)',
      ),
      false);

describe.skipIf(!ready)('two service instances sharing the engines', () => {
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    a = await startTestService({ rateLimitMax: 8, rateLimitWindowMs: 60_000 });
    const { databaseUrl, redisUrl, queuePrefix, s3 } = a.config;
    b = await startTestService({ databaseUrl, redisUrl, queuePrefix, s3, rateLimitMax: 8, rateLimitWindowMs: 60_000 });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('serves one job from either instance, and a revoke on one refuses the key on the other at once', async () => {
    const key = await a.createApiKey('shared-ws');
    const job = await createJob(api(a.baseUrl, key));
    expect((await api(b.baseUrl, key)('GET', `/jobs/${job.id}`)).status).toBe(200);
    const keys = await a.service.ports.keys.listKeys('shared-ws');
    expect(await a.service.ports.keys.revokeKey(keys[0]!.id)).toBe(true);
    const refused = await api(b.baseUrl, key)('GET', `/jobs/${job.id}`);
    expect(refused.status).toBe(401);
    expect(errorBody(refused).name).toBe('UNAUTHORIZED');
  });

  it('counts one rate-limit budget per key across instances', async () => {
    const key = await a.createApiKey('budget-ws');
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await api(i % 2 ? b.baseUrl : a.baseUrl, key)('GET', '/jobs')).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(8);
    expect(statuses.slice(8)).toEqual([429, 429]);
  });

  it('runs the retention sweep on one instance only, and hands over when that one stops', async () => {
    const key = await a.createApiKey('sweep-ws');
    const job = await createJob(api(a.baseUrl, key));
    await a.service.ports.jobs.update(job.id, {
      output: { isDeletedForClient: false, scheduledForDeletionAt: new Date(Date.now() - 1000).toISOString() },
    });
    // Both instances' own sweepers try at once: the lease holder deletes, the other stands by.
    const swept = await Promise.all([a.service.retention.sweep(), b.service.retention.sweep()]);
    expect([...swept].sort()).toEqual([0, 1]);
    const after = await b.service.ports.jobs.getById(job.id);
    expect(after?.job.output?.isDeletedForClient).toBe(true);

    // A spare instance takes the lease once the holder is gone (it releases it on stop).
    const holderFirst = swept[0] === 1 ? a : b;
    const other = holderFirst === a ? b : a;
    const spare = new RetentionSweeper({
      ...other.service.ports,
      log: pino({ level: 'silent' }),
      lease: { store: other.service.leases, holder: 'spare' },
    });
    expect(await spare.sweep()).toBe(0);
    expect(await other.service.leases.acquire(RETENTION_LEASE, 'spare', 1000)).toBe(false);
    await holderFirst.service.retention.stop();
    expect(await other.service.leases.acquire(RETENTION_LEASE, 'spare', 1000)).toBe(true);
  });
});
