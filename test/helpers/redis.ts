// Redis for tests: the shared server named by RENDERBRIDGE_TEST_REDIS_URL (default the local one),
// unique key prefixes so that test files run in parallel, and throwaway redis-server processes
// (append-only file, fsync always) for tests that kill or restart Redis.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { redactRedisUrl } from '../../service/adapters/bullmq/redis-client.js';

export const TEST_REDIS_URL = process.env.RENDERBRIDGE_TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/** Whether Redis at `url` answers PING within a second; the reason when it does not. */
export async function redisProbe(url = TEST_REDIS_URL): Promise<{ ok: true } | { ok: false; reason: string }> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1000,
    commandTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  let lastError: Error | undefined;
  client.on('error', (err: Error) => (lastError = err));
  try {
    await client.connect();
    await client.ping();
    return { ok: true };
  } catch (err) {
    // "Connection is closed" says less than the socket error before it (ECONNREFUSED, ...).
    return { ok: false, reason: (lastError ?? (err as Error)).message };
  } finally {
    client.disconnect();
  }
}

/**
 * The test Redis URL, or undefined (after saying why) when it does not answer: tests that need it
 * skip locally and fail on CI (CI=true), where Redis must be there.
 */
export async function requireRedis(what: string, url = TEST_REDIS_URL): Promise<string | undefined> {
  const probe = await redisProbe(url);
  if (probe.ok) return url;
  const why =
    `${what} need Redis at ${redactRedisUrl(url)}, which does not answer (${probe.reason}). Start redis-server ` +
    `or set RENDERBRIDGE_TEST_REDIS_URL`;
  if (process.env.CI === 'true') throw new Error(why);
  console.warn(`skipping: ${why}`);
  return undefined;
}

/** Whether the redis-server binary is on PATH (fault tests start their own); same skip/fail rule. */
export function requireRedisServer(what: string): boolean {
  if (spawnSync('sh', ['-c', 'command -v redis-server']).status === 0) return true;
  const why = `${what} need the redis-server binary on PATH (Debian: apt-get install redis-server)`;
  if (process.env.CI === 'true') throw new Error(why);
  console.warn(`skipping: ${why}`);
  return false;
}

/** A key prefix no other test uses: `rbtest-<random>`. */
export function uniquePrefix(label = 'rbtest'): string {
  return `${label}-${randomBytes(6).toString('hex')}`;
}

/** Deletes every key under `prefix:` (SCAN, not KEYS, so a shared server is not stalled). */
export async function deletePrefix(prefix: string, url = TEST_REDIS_URL): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await client.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

export interface ThrowawayRedis {
  url: string;
  port: number;
  /** Kills Redis (SIGKILL: no chance to save; or a clean SHUTDOWN) and starts it again on the same port and data. */
  restart(how?: 'kill' | 'shutdown'): Promise<void>;
  /** Kills Redis (SIGKILL) and leaves it down until restart(). */
  down(): Promise<void>;
  /** Kills Redis for good and removes its data. */
  stop(): Promise<void>;
}

/**
 * Starts a private redis-server whose every write is fsynced to its append-only file; with a
 * password, the URL carries it (for checking that errors never show it).
 */
export async function startThrowawayRedis(opts: { password?: string } = {}): Promise<ThrowawayRedis> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rb-redis-'));
  const port = await freePort();
  const auth = opts.password ? `:${encodeURIComponent(opts.password)}@` : '';
  const url = `redis://${auth}127.0.0.1:${port}`;
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'yes',
    '--appendfsync',
    'always',
    '--dir',
    dir,
  ];
  if (opts.password) args.push('--requirepass', opts.password);
  const login = opts.password ? [`AUTH ${opts.password}`] : [];
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', args, { stdio: 'ignore' });
    await waitForPong(port, child, login);
  };
  const kill = async (how: 'kill' | 'shutdown') => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    if (how === 'shutdown') await rawCommands(port, [...login, 'SHUTDOWN']).catch(() => c.kill('SIGKILL'));
    else c.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url,
    port,
    down: () => kill('kill'),
    restart: async (how = 'kill') => {
      await kill(how);
      await start();
    },
    stop: async () => {
      await kill('kill');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Waits until Redis answers PING with PONG (not LOADING while it replays its file). */
async function waitForPong(
  port: number,
  child: ChildProcess,
  login: readonly string[],
  timeoutMs = 10_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`redis-server on port ${port} exited with code ${child.exitCode}`);
    const reply = await rawCommands(port, [...login, 'PING']).catch(() => '');
    if (reply.includes('+PONG')) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`);
}

/** Sends inline commands and returns their replies (one line each), or what came before the server closed. */
function rawCommands(port: number, commands: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const timer = setTimeout(() => socket.destroy(new Error('no reply')), 1000);
    let reply = '';
    socket.on('connect', () => socket.write(commands.map((c) => `${c}\r\n`).join('')));
    socket.on('data', (d) => {
      reply += d.toString();
      if (reply.split('\r\n').length > commands.length) socket.end();
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(reply);
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
