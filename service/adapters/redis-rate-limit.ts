// Rate-limit buckets in Redis, so a key's budget is per farm, not per service instance. One Lua
// script per request: the bucket is read, refilled by Redis's own clock (instances' clocks
// may differ; tests hand in their own) and charged atomically.
import type { Redis } from 'ioredis';
import type { RateBudget } from '../domain/rate-budget.js';
import type { RateDecision, RateLimiter } from '../ports/rate-limit.js';

// Same steps as refill() and decide() in service/domain/rate-budget.ts.
const TAKE = `
local max = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local need = math.min(math.max(tonumber(ARGV[3]), 1), max)
local now = tonumber(ARGV[4])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local perMs = max / window
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or max
local at = tonumber(b[2]) or now
tokens = math.min(max, tokens + math.max(0, now - at) * perMs)
local allowed = 0
if tokens >= need then
  tokens = tokens - need
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(window))
local retry = 0
if allowed == 0 then retry = math.ceil((need - tokens) / perMs) end
return { allowed, math.floor(tokens), retry, math.ceil((max - tokens) / perMs) }
`;

type TakeCommand = (
  key: string,
  max: number,
  windowMs: number,
  cost: number,
  ...now: number[]
) => Promise<[number, number, number, number]>;

export class RedisRateLimiter implements RateLimiter {
  private readonly run: TakeCommand;
  private reportedAt = Number.NEGATIVE_INFINITY;

  /**
   * `client` should fail fast (short commandTimeout, no offline queue): every API request waits
   * on it. While Redis cannot answer, requests are let through and `onError` hears why.
   */
  constructor(
    private readonly client: Redis,
    private readonly budget: RateBudget,
    private readonly opts: {
      keyPrefix: string;
      onError?: (err: Error) => void;
      /** The clock buckets refill by, epoch ms. Default Redis's own (TIME), the same for every instance. */
      now?: () => number;
    },
  ) {
    client.defineCommand('renderbridgeTakeToken', { numberOfKeys: 1, lua: TAKE });
    this.run = (client as unknown as { renderbridgeTakeToken: TakeCommand }).renderbridgeTakeToken.bind(client);
  }

  async take(key: string, cost = 1): Promise<RateDecision> {
    try {
      const [allowed, remaining, retryAfterMs, resetMs] = await this.run(
        `${this.opts.keyPrefix}${key}`,
        this.budget.max,
        this.budget.windowMs,
        cost,
        ...(this.opts.now ? [this.opts.now()] : []),
      );
      return { allowed: allowed === 1, limit: this.budget.max, remaining, retryAfterMs, resetMs };
    } catch (err) {
      // Failing open: an outage of the shared counters must not take the whole API down. Said
      // once a minute at most, not once per request.
      if (Date.now() - this.reportedAt >= 60_000) {
        this.reportedAt = Date.now();
        this.opts.onError?.(
          new Error(`requests let through unlimited: ${err instanceof Error ? err.message : String(err)}`),
        );
      }
      return { allowed: true, limit: this.budget.max, remaining: this.budget.max, retryAfterMs: 0, resetMs: 0 };
    }
  }

  close(): void {
    this.client.disconnect();
  }
}
