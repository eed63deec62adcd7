// The service side of bench:render: a service (and workers beside it) in child processes on a
// fresh data folder, jobs uploaded and validated untimed, then timed from POST /render to the
// moment the service marked them completed (the job's own `updatedAt` stamp, same machine clock).
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { RouteBody } from '../../shared/routes.js';
import { RenderJobClient } from '../../shared/client/client.js';
import type { ServiceConfig } from '../../service/config.js';
import { createApiKey } from '../../service/domain/api-keys.js';
import { openKeyStore } from '../../service/stack.js';
import type { WorkerTuning } from '../../service/worker/start.js';
import { startChild, type Child } from './children.js';
import type { RenderChildInput } from './render-service-child.js';

export interface RenderService {
  client: RenderJobClient;
  /** The service's process (its Blenders are its children). */
  pid: number;
  baseUrl: string;
  apiKey: string;
  dataDir: string;
  stop(): Promise<void>;
}

export interface RenderServiceOptions {
  /** Render slots in the service's own process (0 with `workers`). */
  slots: number;
  config?: Partial<ServiceConfig>;
  tuning?: WorkerTuning;
  /**
   * Worker processes beside the service, one slot each, each pinned to its CPU list, named
   * `<workerName>1`, `2`... Default none.
   */
  workers?: { cpus: string }[];
  /** The service logs to this file. Default: no log. */
  logFile?: string;
}

export async function startRenderService(o: RenderServiceOptions): Promise<RenderService> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rb-bench-render-'));
  const config = { ...o.config, dataDir, workers: o.slots };
  const children: Child<unknown>[] = [];
  const stop = async () => {
    await Promise.all(children.map((c) => c.stop()));
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const input: RenderChildInput = {
      role: 'service',
      config,
      ...(o.tuning ? { worker: o.tuning } : {}),
      ...(o.logFile ? { logFile: o.logFile } : {}),
    };
    const svc = await startChild<{ baseUrl: string }>('render-service-child.ts', input);
    children.push(svc);
    for (const [i, w] of (o.workers ?? []).entries()) {
      const name = `${o.tuning?.runtime?.workerName ?? 'worker'}${i + 1}`;
      const worker: RenderChildInput = {
        role: 'worker',
        config: { ...config, workers: 1 },
        worker: { ...o.tuning, runtime: { ...o.tuning?.runtime, workerName: name } },
      };
      children.push(await startChild('render-service-child.ts', worker, { cpus: w.cpus }));
    }
    const store = await openKeyStore(dataDir);
    const { key } = await createApiKey(store.keys, { workspace: 'bench', label: 'bench' });
    await store.close();
    return {
      client: new RenderJobClient({ baseUrl: svc.ready.baseUrl, apiKey: key }),
      pid: svc.pid,
      baseUrl: svc.ready.baseUrl,
      apiKey: key,
      dataDir,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Uploads and validates `file` (untimed); returns the job id, ready for POST /render. */
export async function validatedJob(client: RenderJobClient, file: string): Promise<string> {
  const { slug } = await client.uploadProject(file);
  const job = await client.createJob({ slug });
  await client.validateJob(job.id);
  const done = await client.waitForStatus(job.id, ['validated', 'failed'], { intervalMs: 100, timeoutMs: 300_000 });
  if (done.status !== 'validated') throw new Error(`validation failed: ${JSON.stringify(done.failedReason)}`);
  return job.id;
}

/** What POST /render takes as requestedRenderConfig. */
export type RenderRequest = RouteBody<'renderJob'>['requestedRenderConfig'];

export interface TimedRender {
  seconds: number;
  /** POST /render until the job turned `rendering` (Blender's first `Fra:` line). */
  firstFrame: number;
}

/**
 * Poll interval until the job turns `rendering`, then while it renders: every second, as the
 * bridge daemon polls an active job (the end is the service's own stamp, not the poll).
 */
const FIRST_FRAME_POLL_MS = 50;
const COMPLETION_POLL_MS = 1000;

/**
 * POST /render of a validated job, timed to its completion stamp. `during` is called at every poll
 * with the job's frames done (the kill scenario uses it). Checks that `frames` frames came out.
 */
export async function timedRender(
  client: RenderJobClient,
  jobId: string,
  config: RenderRequest,
  frames: number,
  during?: (framesDone: number) => Promise<void>,
): Promise<TimedRender> {
  const t0 = performance.now();
  const t0Wall = Date.now();
  await client.renderJob(jobId, { requestedRenderConfig: config });
  let firstFrame = NaN;
  for (;;) {
    const p = await client.getJobProgress(jobId);
    if (Number.isNaN(firstFrame) && ['rendering', 'finalizing', 'completed'].includes(p.status))
      firstFrame = (performance.now() - t0) / 1000;
    if (p.status === 'completed') break;
    if (p.status === 'failed' || p.status === 'canceled')
      throw new Error(`job ${p.status}: ${JSON.stringify((await client.getJob(jobId)).failedReason)}`);
    await during?.(p.framesDone ?? 0);
    await new Promise((r) => setTimeout(r, Number.isNaN(firstFrame) ? FIRST_FRAME_POLL_MS : COMPLETION_POLL_MS));
  }
  const seenAt = Date.now();
  const completedAt = Date.parse((await client.getJob(jobId)).updatedAt);
  if (!(completedAt >= t0Wall && completedAt <= seenAt))
    throw new Error(`the job's completion stamp ${new Date(completedAt).toISOString()} is outside the run`);
  const out = (await client.getDownloads(jobId)).frameOutputs ?? [];
  if (out.length !== frames || new Set(out.map((f) => f.fileName)).size !== frames)
    throw new Error(`the service delivered ${out.length} frames, not ${frames} different ones`);
  return { seconds: (completedAt - t0Wall) / 1000, firstFrame };
}

/** CPU seconds of a process (`own`) and of its children it has reaped (`children`: Blender, ffmpeg), from /proc. */
export function cpuSeconds(pid: number | 'self'): { own: number; children: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const tick = (i: number) => Number(fields[i]) / CLOCK_TICKS;
  return { own: tick(11) + tick(12), children: tick(13) + tick(14) };
}

/** USER_HZ: the unit of /proc's CPU times (100 on every Linux build this runs on). */
const CLOCK_TICKS = 100;

/**
 * Waits until `pid` has no child process left (the service's warm Blender ends with its job, just
 * after the job completes): only a reaped child's CPU time counts in /proc's `children`. Gives up
 * with a warning after `timeoutMs`.
 */
export async function childrenGone(pid: number, timeoutMs = 60_000): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const kids = readdirSync('/proc').filter((d) => {
      if (!/^\d+$/.test(d)) return false;
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        // tsx's esbuild service lives as long as the child that loaded it: not a render process.
        return Number(stat.split(') ')[1]!.split(' ')[1]) === pid && !stat.includes('(esbuild)');
      } catch {
        return false; // gone meanwhile
      }
    });
    if (kids.length === 0) return;
    if (Date.now() - t0 > timeoutMs) {
      // Only the CPU columns suffer: said, and the run goes on.
      console.warn(
        `the service still has child processes ${kids.join(', ')} after ${timeoutMs} ms: their CPU is not counted yet`,
      );
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
