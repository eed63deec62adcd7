// A `renderbridge worker` process that holds nothing of the farm's but its own worker token: no AWS
// keys, no S3, Redis or database settings; everything goes through the service's worker API (the
// keyless remote worker tests).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { createWorkerToken } from '../../service/domain/worker-tokens.js';
import type { KeylessFarm } from './keyless-worker.js';

const REPO_ROOT = path.resolve(import.meta.dirname, '../..');

export interface WorkerProcess {
  name: string;
  child: ChildProcess;
  /** Its --data-dir: its jobs' work folders are under work/. */
  dataDir: string;
  /** What it wrote to stderr so far: its last words say why a job failed on it. */
  stderr(): string;
  /** SIGTERM, then waits for it to exit. */
  stop(): Promise<void>;
}

export async function startWorkerProcess(
  farm: KeylessFarm,
  opts: {
    /** Default `worker-<random>`. */
    name?: string;
    /** More command-line options. Default none: one slot (`--workers 1`). */
    args?: string[];
  } = {},
): Promise<WorkerProcess> {
  const name = opts.name ?? `worker-${randomUUID().slice(0, 8)}`;
  const { token } = await createWorkerToken(farm.svc.service.ports.workerTokens, name);
  const env: Record<string, string> = { RENDERBRIDGE_WORKER_TOKEN: token };
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(AWS_|RENDERBRIDGE_|DATABASE_URL|REDIS_URL)/.test(k)) env[k] = v;
  const dataDir = path.join(await farm.tempDir(), name);
  const args = ['--import', 'tsx', 'cli/index.ts', 'worker', '--service-url', farm.svc.origin, '--data-dir', dataDir];
  args.push('--name', name, '--workers', '1', ...(opts.args ?? []));
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    name,
    child,
    dataDir,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}
