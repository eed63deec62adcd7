// The one ioredis connection a BullMQ task queue uses (BullMQ's queues and workers share it; the
// adapter never blocks on it). It reconnects by itself for as long as Redis is away, while every
// command gives up after `commandTimeoutMs`, so a Redis outage surfaces as an error, never a hang.
import { Redis } from 'ioredis';

export interface RedisClientOptions {
  /** A Redis command with no reply after this long fails (Redis down or restarting). Default 5000 ms. */
  commandTimeoutMs?: number;
  /** How long opening waits for Redis to answer. Default 5000 ms. */
  connectTimeoutMs?: number;
  /** Longest pause between two reconnect attempts while Redis is away. Default 1000 ms. */
  maxReconnectDelayMs?: number;
}

/** The URL with its password (and user name) replaced, for messages and logs. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    if (u.username && u.password) u.username = '***';
    return u.toString();
  } catch {
    return 'an unparsable Redis URL';
  }
}

/** `err` (changed in place when it is an Error) with the URL and its password removed from its message and stack. */
export function redactError(err: unknown, url: string): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  let secret = '';
  try {
    secret = decodeURIComponent(new URL(url).password);
  } catch {
    // An unparsable URL has no password to hide beyond the URL itself.
  }
  const clean = (text: string) => {
    const noUrl = text.split(url).join(redactRedisUrl(url));
    return secret ? noUrl.split(secret).join('***') : noUrl;
  };
  e.message = clean(e.message);
  if (e.stack) e.stack = clean(e.stack);
  return e;
}

/** Connects and waits until Redis answers; throws (without the password) when it does not in time. */
export async function connectRedis(
  url: string,
  opts: RedisClientOptions & { name: string; onError: (err: Error) => void },
): Promise<Redis> {
  const commandTimeout = opts.commandTimeoutMs ?? 5000;
  const connectTimeout = opts.connectTimeoutMs ?? 5000;
  const maxDelay = opts.maxReconnectDelayMs ?? 1000;
  let client: Redis;
  try {
    client = new Redis(url, {
      connectionName: opts.name,
      lazyConnect: true,
      connectTimeout,
      commandTimeout,
      // Queued commands wait for a reconnect, but fail after a few attempts (or commandTimeout)
      // instead of piling up for the length of an outage.
      maxRetriesPerRequest: 3,
      enableOfflineQueue: true,
      retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 10), maxDelay),
    });
  } catch (err) {
    throw redactError(err, url);
  }
  // Without a listener ioredis prints every reconnect failure; the adapter reports them itself.
  client.on('error', (err: Error) => opts.onError(redactError(err, url)));
  try {
    await withDeadline(client.connect(), connectTimeout + 500, `no answer within ${connectTimeout} ms`);
    await client.ping();
  } catch (err) {
    client.disconnect();
    const reason = redactError(err, url).message;
    throw new Error(
      `cannot reach Redis at ${redactRedisUrl(url)}: ${reason}. Is redis-server running there (check the ` +
        `Redis URL setting)?`,
      { cause: err },
    );
  }
  return client;
}

/** Closes the connection politely, or drops it when Redis does not answer in time. */
export async function closeRedis(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'end') return;
  try {
    await withDeadline(client.quit(), timeoutMs, 'QUIT got no answer');
  } catch {
    // Redis is away: nothing to say goodbye to.
  } finally {
    client.disconnect();
  }
}

/** Rejects with `message` when `p` has not settled within `ms`; the timer never outlives the call. */
export function withDeadline<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}
