// What a farm's shared parts need: the database (migrated), Redis (answering, and keeping BullMQ's
// keys), S3 (reachable, and these credentials may write, read and delete), and a clock that agrees
// with the service's (signed URLs and task leases are judged by time).
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { S3Settings } from '../../service/config.js';
import { SQLITE_FILE_NAME } from '../../service/local-stack.js';
import { openS3 } from '../../service/stack.js';
import { requireMigratedPostgres } from '../admin-state.js';
import { fail, ok, reason, skip, warn, type CheckResult } from './check.js';

export async function databaseCheck(o: { databaseUrl?: string; dataDir: string }): Promise<CheckResult> {
  if (!o.databaseUrl) {
    const file = path.join(o.dataDir, SQLITE_FILE_NAME);
    return existsSync(file)
      ? ok('database', `SQLite at ${file}`)
      : warn(
          'database',
          `no database in ${o.dataDir} yet`,
          'Start `renderbridge service` once (it creates the database), or pass --data-dir / --database-url ' +
            "naming the farm's.",
        );
  }
  try {
    await requireMigratedPostgres(o.databaseUrl, 'the PostgreSQL database');
    return ok('database', 'PostgreSQL answers, schema up to date');
  } catch (err) {
    return fail(
      'database',
      reason(err),
      'Check --database-url (RENDERBRIDGE_DATABASE_URL), that PostgreSQL runs and accepts this user, and ' +
        'start the service once to create the schema.',
    );
  }
}

export async function redisCheck(redisUrl: string | undefined): Promise<CheckResult> {
  if (!redisUrl) return skip('redis', 'no --redis-url: the queue lives in the database');
  const { Redis } = await import('ioredis');
  const client = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: 5000,
    commandTimeout: 5000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const info = await client.info('server');
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
    const policy = await client.config('GET', 'maxmemory-policy').then(
      (r) => (r as string[])[1],
      () => undefined,
    );
    if (policy !== undefined && policy !== 'noeviction') {
      return warn(
        'redis',
        `Redis ${version}, maxmemory-policy ${policy}`,
        'Set maxmemory-policy noeviction: with eviction Redis may drop queued tasks (BullMQ needs every key kept).',
      );
    }
    return ok('redis', `Redis ${version}${policy ? `, maxmemory-policy ${policy}` : ''}`);
  } catch (err) {
    return fail(
      'redis',
      `Redis does not answer: ${reason(err)}`,
      'Check --redis-url (RENDERBRIDGE_REDIS_URL) and that Redis runs and accepts this password.',
    );
  } finally {
    client.disconnect();
  }
}

/** Writes, reads back and deletes one small object: proves the bucket exists and the credentials may do all three. */
export async function s3Check(settings: S3Settings | undefined): Promise<CheckResult> {
  if (!settings) return skip('s3', 'no --s3-bucket: files are stored in the data folder');
  const where = `bucket ${settings.bucket}${settings.endpoint ? ` at ${settings.endpoint}` : ''}`;
  let storage: Awaited<ReturnType<typeof openS3>> | undefined;
  const key = `doctor/${randomUUID()}`;
  try {
    storage = await openS3(settings);
    const { Readable } = await import('node:stream');
    await storage.put(key, Readable.from([Buffer.from('renderbridge doctor')]));
    const stat = await storage.stat(key);
    if (stat?.size !== 19) throw new Error('the object written could not be read back');
    await storage.delete(key);
    return ok('s3', `${where}: write, read and delete work`);
  } catch (err) {
    return fail(
      's3',
      `${where}: ${reason(err)}`,
      'Check the bucket name, --s3-endpoint and --s3-region, and that the credentials ' +
        '(AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the instance role) may GetObject, PutObject, DeleteObject ' +
        'and ListBucket.',
    );
  } finally {
    storage?.close();
  }
}

/** Compares this machine's clock with the service's Date header (half the round trip allowed for). */
export async function clockCheck(serviceUrl: string | undefined, maxSkewMs = 2000): Promise<CheckResult> {
  if (!serviceUrl) return skip('clock', 'no --service-url to compare clocks with');
  const origin = new URL(serviceUrl).origin;
  try {
    const t0 = Date.now();
    const res = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(10_000) });
    const t1 = Date.now();
    const date = res.headers.get('date');
    if (!date)
      return warn(
        'clock',
        `${origin} sent no Date header`,
        'Put the service behind a proxy that keeps the Date header, or compare clocks by hand.',
      );
    // Date has 1 s resolution: the service's clock lies within [date, date + 1 s).
    const theirs = Date.parse(date) + 500;
    const skew = (t0 + t1) / 2 - theirs;
    const slack = (t1 - t0) / 2 + 500;
    const detail = `${Math.round(skew)} ms against ${origin} (+-${Math.round(slack)} ms)`;
    if (Math.abs(skew) - slack > maxSkewMs)
      return fail(
        'clock',
        detail,
        'Synchronise the clocks (systemd-timesyncd or chrony on every machine): signed URLs and task leases ' +
          'are judged by time.',
      );
    return ok('clock', detail);
  } catch (err) {
    return fail('clock', `${origin} does not answer: ${reason(err)}`, 'Check --service-url and that the service runs.');
  }
}
