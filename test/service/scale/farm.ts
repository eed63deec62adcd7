// A render farm of real processes for the scale-out fault tests: service instances and workers
// started as `node --import tsx cli/index.ts ...` (as an operator would start them), sharing one
// PostgreSQL database, one Redis key prefix and one S3 bucket (s3rver). Each worker has its own
// work folder, as if on its own machine. Every process can be killed like a machine that dies
// (farm-process.ts).
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { execFile } from 'node:child_process';
import { RenderJobClient } from '../../../shared/client/client.js';
import { createTestDatabase } from '../../helpers/postgres.js';
import { deletePrefix, uniquePrefix } from '../../helpers/redis.js';
import { startS3, type TestS3 } from '../../helpers/s3.js';
import { FarmProcess } from './farm-process.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = ['--import', 'tsx', 'cli/index.ts'];
const run = promisify(execFile);

export interface FarmOptions {
  /** Redis holding the task queue (the shared test server, or a throwaway one). */
  redisUrl: string;
  /** Service instances started at once. Default 1. */
  services?: number;
  /** Worker processes started at once (each with one render slot). Default 3. */
  workers?: number;
  /** Seconds before a dead worker's tasks go back to the queue (worker --lease-seconds). Default 3. */
  leaseSeconds?: number;
  /** How long a process may take to come up. Default 90000 ms (tsx compiles on start; CI machines are slow). */
  startTimeoutMs?: number;
}

export interface FarmService {
  proc: FarmProcess;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** `<origin>/api/external/v1` */
  baseUrl: string;
  /** The typed public client on this instance. */
  client: RenderJobClient;
}

export interface Farm {
  services: FarmService[];
  workers: FarmProcess[];
  apiKey: string;
  /** Redis key prefix of the queue shared by every process. */
  prefix: string;
  s3: TestS3;
  /** Starts one more worker reporting to every service instance. */
  startWorker(): Promise<FarmProcess>;
  /** The last lines of every process, for a failure report. */
  report(lines?: number): string;
  /** Kills every process (even after a failure), drops the database and the Redis keys, removes the folders. */
  close(): Promise<void>;
}

export async function startFarm(opts: FarmOptions): Promise<Farm> {
  const root = await mkdtemp(path.join(tmpdir(), 'rb-farm-'));
  const prefix = uniquePrefix('rbfarm');
  const procs: FarmProcess[] = [];
  const killAll = () => procs.forEach((p) => p.killNow());
  // A test process that exits without its cleanup still takes the farm with it.
  process.once('exit', killAll);
  const cleanups: (() => Promise<void>)[] = [async () => void (await rm(root, { recursive: true, force: true }))];
  cleanups.push(() => deletePrefix(prefix, opts.redisUrl));
  const close = async () => {
    killAll();
    await Promise.all(procs.map((p) => p.exited));
    process.off('exit', killAll);
    const errors: unknown[] = [];
    for (const c of cleanups.splice(0).reverse()) await c().catch((e: unknown) => errors.push(e));
    if (errors.length) throw new AggregateError(errors, 'cleaning up the farm failed');
  };

  try {
    const db = await createTestDatabase();
    cleanups.push(() => db.drop());
    const s3 = await startS3();
    cleanups.push(() => s3.close());
    const env: NodeJS.ProcessEnv = { ...process.env, ...s3.env };
    // Flags, not the environment, choose the engines: a stray RENDERBRIDGE_* of the caller must not.
    // Each worker gets its own token (below); the services need none.
    for (const k of [
      'RENDERBRIDGE_WORKER_TOKEN',
      'RENDERBRIDGE_DATABASE_URL',
      'RENDERBRIDGE_REDIS_URL',
      'RENDERBRIDGE_QUEUE_PREFIX',
      'RENDERBRIDGE_S3_BUCKET',
      'RENDERBRIDGE_S3_ENDPOINT',
      'RENDERBRIDGE_S3_PREFIX',
    ])
      delete env[k];
    const engines = [
      '--redis-url',
      opts.redisUrl,
      '--queue-prefix',
      prefix,
      '--s3-bucket',
      s3.settings.bucket,
      '--s3-endpoint',
      s3.settings.endpoint!,
    ];
    const startTimeoutMs = opts.startTimeoutMs ?? 90_000;

    const launch = async (
      name: string,
      args: string[],
      ready: RegExp,
      workDir?: string,
      own: NodeJS.ProcessEnv = {},
    ): Promise<{ proc: FarmProcess; match: RegExpMatchArray }> => {
      const child = spawn(process.execPath, [...CLI, ...args], {
        cwd: REPO_ROOT,
        env: { ...env, ...own },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const proc = new FarmProcess(name, child, workDir);
      procs.push(proc);
      const deadline = Date.now() + startTimeoutMs;
      for (;;) {
        const line = proc.lines.find((l) => l.startsWith('err ') && ready.test(l));
        if (line) return { proc, match: line.match(ready)! };
        if (!proc.alive) throw new Error(`${name} exited before it was ready:\n${proc.tail()}`);
        if (Date.now() > deadline)
          throw new Error(`${name} was not ready within ${startTimeoutMs} ms:\n${proc.tail()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };

    const services: FarmService[] = [];
    const apiKey = (
      await run(
        process.execPath,
        [...CLI, 'admin', 'create-key', '--database-url', db.url, '--workspace', 'studio', '--label', 'farm'],
        { cwd: REPO_ROOT, env },
      )
    ).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    const startService = async (i: number): Promise<FarmService> => {
      const dataDir = path.join(root, `s${i}`);
      await mkdir(dataDir);
      const args = [
        'service',
        '--port',
        '0',
        '--workers',
        '0',
        '--data-dir',
        dataDir,
        '--database-url',
        db.url,
        '--log-level',
        'info',
        ...engines,
      ];
      const { proc, match } = await launch(`service s${i}`, args, /API base URL: (http:\/\/\S+)/);
      const baseUrl = match[1]!;
      return { proc, baseUrl, origin: new URL(baseUrl).origin, client: new RenderJobClient({ baseUrl, apiKey }) };
    };
    services.push(...(await Promise.all(Array.from({ length: opts.services ?? 1 }, (_, i) => startService(i + 1)))));

    let workerCount = 0;
    const startWorker = async (): Promise<FarmProcess> => {
      const name = `w${++workerCount}`;
      const dataDir = path.join(root, name);
      await mkdir(dataDir);
      const blender = process.env.RENDERBRIDGE_TEST_BLENDER ? ['--blender', process.env.RENDERBRIDGE_TEST_BLENDER] : [];
      // Its own token, as an operator gives each render machine one: it opens only the jobs of its leases.
      const token = (
        await run(
          process.execPath,
          [...CLI, 'admin', 'create-worker-token', '--database-url', db.url, '--name', name],
          { cwd: REPO_ROOT, env },
        )
      ).stdout
        .trim()
        .split('\n')
        .at(-1)!;
      const args = [
        'worker',
        ...services.flatMap((s) => ['--service-url', s.origin]),
        ...engines,
        ...blender,
        '--data-dir',
        dataDir,
        '--name',
        name,
        '--workers',
        '1',
        '--chunk-frames',
        '1',
        '--lease-seconds',
        String(opts.leaseSeconds ?? 3),
        // The per-frame lines (`frame begun`) this harness reads are at debug.
        '--log-level',
        'debug',
      ];
      return (
        await launch(`worker ${name}`, args, new RegExp(`renderbridge worker ${name}:`), dataDir, {
          RENDERBRIDGE_WORKER_TOKEN: token,
        })
      ).proc;
    };
    const workers = await Promise.all(Array.from({ length: opts.workers ?? 3 }, () => startWorker()));

    return {
      services,
      workers,
      apiKey,
      prefix,
      s3,
      async startWorker() {
        const w = await startWorker();
        workers.push(w);
        return w;
      },
      report: (lines = 40) => procs.map((p) => p.tail(lines)).join('\n'),
      close,
    };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
