// The rate limiters against their conformance suite: in memory, and in Redis (the shared test
// server, one key prefix per harness), plus what only each one does.
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { RedisRateLimiter } from '../../../service/adapters/redis-rate-limit.js';
import { MemoryRateLimiter } from '../../../service/adapters/memory-rate-limit.js';
import type { RateBudget } from '../../../service/domain/rate-budget.js';
import {
  deletePrefix,
  requireRedis,
  requireRedisServer,
  startThrowawayRedis,
  uniquePrefix,
} from '../../helpers/redis.js';
import { rateLimiterConformance } from './rate-limiter.js';

const redisUrl = await requireRedis('the Redis rate-limiter tests');
const canSpawnRedis = requireRedisServer('the Redis rate-limiter outage test');

/** Connected, and failing fast like the service's own limiter connection (no offline queue). */
async function fastClient(url: string): Promise<Redis> {
  const c = new Redis(url, {
    commandTimeout: 500,
    connectTimeout: 1000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: true,
  });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

rateLimiterConformance('memory', {
  open: async (budget, now) => ({
    limiter: new MemoryRateLimiter(budget, now ? { now } : {}),
    other: null,
    close: async () => undefined,
  }),
});

describe('MemoryRateLimiter', () => {
  it('answers synchronously (no promise per request)', () => {
    const d = new MemoryRateLimiter({ max: 1, windowMs: 1000 }).take('k');
    expect(d).not.toBeInstanceOf(Promise);
    expect(d.allowed).toBe(true);
  });

  it('keeps at most maxKeys buckets, forgetting the least recently used', () => {
    let now = 0;
    const limiter = new MemoryRateLimiter({ max: 1, windowMs: 60_000 }, { maxKeys: 2, now: () => now });
    limiter.take('a');
    limiter.take('b');
    now += 1;
    expect(limiter.take('a').allowed).toBe(false); // a is now the most recent
    limiter.take('c'); // pushes out b
    expect(limiter.take('a').allowed).toBe(false);
    expect(limiter.take('b').allowed).toBe(true); // forgotten: full again
  });
});

describe.skipIf(!redisUrl)('RedisRateLimiter on the test Redis', () => {
  rateLimiterConformance('Redis', {
    open: async (budget: RateBudget, now?: () => number) => {
      const prefix = uniquePrefix('rbrate');
      const clients: Redis[] = [];
      const make = async () => {
        const c = await fastClient(redisUrl!);
        clients.push(c);
        return new RedisRateLimiter(c, budget, { keyPrefix: `${prefix}:`, ...(now ? { now } : {}) });
      };
      return {
        limiter: await make(),
        other: make,
        close: async () => {
          for (const c of clients) c.disconnect();
          await deletePrefix(prefix, redisUrl!);
        },
      };
    },
  });

  it('lets buckets expire from Redis once they would be full again', async () => {
    const prefix = uniquePrefix('rbrate');
    const client = await fastClient(redisUrl!);
    try {
      await new RedisRateLimiter(client, { max: 10, windowMs: 60_000 }, { keyPrefix: `${prefix}:` }).take('k');
      const ttl = await client.pttl(`${prefix}:k`);
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    } finally {
      client.disconnect();
      await deletePrefix(prefix, redisUrl!);
    }
  });
});

describe.skipIf(!canSpawnRedis)('RedisRateLimiter when Redis goes away', () => {
  it('lets requests through, says why once, and counts again when Redis is back', async () => {
    const redis = await startThrowawayRedis();
    const client = await fastClient(redis.url);
    const errors: string[] = [];
    const limiter = new RedisRateLimiter(
      client,
      { max: 1, windowMs: 60_000 },
      { keyPrefix: 'rl:', onError: (e) => errors.push(e.message) },
    );
    try {
      expect((await limiter.take('k')).allowed).toBe(true);
      expect((await limiter.take('k')).allowed).toBe(false);
      await redis.down();
      const during = [];
      for (let i = 0; i < 3; i++) during.push((await limiter.take('k')).allowed);
      expect(during).toEqual([true, true, true]);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/^requests let through unlimited: /);
      await redis.restart();
      // Counted again once the client is back: its reconnection is what the test waits for.
      await vi.waitFor(() => expect(client.status).toBe('ready'), { timeout: 20_000, interval: 20 });
      // Back from its append-only file: the spent budget is remembered, and new keys are counted.
      expect((await limiter.take('k')).allowed).toBe(false);
      expect((await limiter.take('k2')).allowed).toBe(true);
      expect((await limiter.take('k2')).allowed).toBe(false);
    } finally {
      client.disconnect();
      await redis.stop();
    }
  });
});
