// One measurement of bench:scale: one queue engine, fresh state, worker processes started, then
// a warm-up, a burst and a steady-rate phase of render-chunk tasks, then the exactly-once check.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { cpuSeconds, startChild, type Child } from './lib/children.js';
import { openEngine, prepareEngine, type EngineName, type OpenEngine } from './scale-engines.js';
import {
  checkExactlyOnce,
  indexRecords,
  now,
  phaseStats,
  postgresCpuSeconds,
  redisCpuSeconds,
  type PhaseStats,
  type ReadyTimes,
  type WorkerRecords,
} from './scale-stats.js';
import type { WorkerInput } from './scale-worker.js';
import type { TaskQueue } from '../service/ports/tasks.js';

export interface RunOptions {
  /** Jobs whose tasks are enqueued (ids of seeded job records). */
  jobIds: readonly string[];
  tasksPerJob: number;
  /** Jobs of the untimed warm-up (their tasks come on top). */
  warmupJobs: number;
  processes: number;
  lanes: number;
  taskMs: number;
  /** Tasks per second of the steady phase, and how many of the jobs it enqueues tasks for. */
  rate: number;
  steadyJobs: number;
  seededDir: string;
  tmpRoot: string;
}

export type PhaseName = 'burst' | 'steady';

export interface PhaseResult extends PhaseStats {
  /** CPU over the phase, in cores: the worker processes together, this process (producer), the queue's server. */
  workerCpu: number;
  producerCpu: number;
  serverCpu: number;
  /** Enqueue rate actually reached, tasks/s. */
  enqueueRate: number;
}

export interface Measurement {
  engine: EngineName;
  phases: Record<PhaseName, PhaseResult>;
  /** CPU seconds the queue's own server (Redis, PostgreSQL) used over the whole measurement. */
  serverCpuSeconds: number;
}

/** The render-chunk task of frame `frame` of a job, shaped as render-plan.ts enqueues it (one frame per chunk). */
function chunkTask(jobId: string, index: number, frame: number) {
  return {
    id: `chunk:${jobId}:${index}`,
    jobId,
    kind: 'render-chunk' as const,
    payload: { index, start: frame, end: frame, step: 1, frames: [frame], requires: { blender: '4.2' } },
  };
}

/** Whether process `pid` still runs (exited children are reaped by Node, so they are gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitDone(
  queue: TaskQueue,
  total: number,
  timeoutMs: number,
  workers: readonly Child<unknown>[],
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const dead = workers.filter((w) => !alive(w.pid));
    if (dead.length)
      throw new Error(
        `worker process ${dead.map((w) => w.pid).join(', ')} exited during the run (see its output above)`,
      );
    const c = await queue.counts();
    if (c.failed > 0)
      throw new Error(`${c.failed} tasks failed; the trivial handler never fails, so the queue or the job store did`);
    if (c.done >= total) return;
    if (Date.now() > until) {
      throw new Error(
        `only ${c.done} of ${total} tasks done after ${timeoutMs / 1000} s (${c.queued} queued, ${c.running} ` +
          `running): the workers stalled (see their output above)`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** CPU meters of one phase; `stop` gives each in cores over the phase. */
function cpuMeter(children: Child<unknown>[], server: () => Promise<number>) {
  return async () => {
    const t0 = now();
    const w0 = children.reduce((n, c) => n + cpuSeconds(c.pid), 0);
    const p0 = process.cpuUsage();
    const s0 = await server();
    return async () => {
      const wall = (now() - t0) / 1000;
      const p = process.cpuUsage(p0);
      return {
        workerCpu: (children.reduce((n, c) => n + cpuSeconds(c.pid), 0) - w0) / wall,
        producerCpu: (p.user + p.system) / 1e6 / wall,
        serverCpu: ((await server()) - s0) / wall,
      };
    };
  };
}

export async function measure(engine: EngineName, o: RunOptions): Promise<Measurement> {
  const { spec, cleanup } = await prepareEngine(engine, o.seededDir, o.tmpRoot);
  const server =
    engine === 'bullmq'
      ? () => redisCpuSeconds(spec.redisUrl!)
      : engine === 'postgres'
        ? async () => postgresCpuSeconds()
        : async () => 0;
  const children: Child<{ pid: number }>[] = [];
  let opened: OpenEngine | undefined;
  try {
    opened = await openEngine(spec);
    const { queue } = opened;
    const serverStart = await server();
    const outFiles = Array.from({ length: o.processes }, (_, i) => path.join(spec.dataDir, `records-${i}.json`));
    for (let i = 0; i < o.processes; i++) {
      const input: WorkerInput = { spec, lanes: o.lanes, taskMs: o.taskMs, name: `w${i + 1}`, outFile: outFiles[i]! };
      // startChild runs files of bench/lib; this one lives beside the benchmark.
      children.push(await startChild<{ pid: number }>('../scale-worker.ts', input));
    }
    const meter = cpuMeter(children, server);
    const enqueued: string[] = [];
    // Generous: a queue at 20 tasks/s still finishes; slower means something is broken.
    const timeoutFor = (n: number) => 120_000 + (n / 20) * 1000;

    /** Enqueues the jobs' tasks, one job after another as render-plan does; `rate` (tasks/s) paces them. */
    const enqueueAll = async (jobIds: readonly string[], offset: number, rate?: number) => {
      const ready: ReadyTimes = new Map();
      const t0 = now();
      let i = 0;
      for (const jobId of jobIds) {
        for (let k = 0; k < o.tasksPerJob; k++, i++) {
          if (rate) {
            const wait = t0 + (i * 1000) / rate - now();
            if (wait >= 1) await new Promise((r) => setTimeout(r, wait));
          }
          const t = chunkTask(jobId, offset + k, k + 1);
          await queue.enqueue(t);
          ready.set(t.id, now());
          enqueued.push(t.id);
        }
      }
      return { ready, firstCall: t0 };
    };

    const runPhase = async (jobIds: readonly string[], offset: number, rate?: number) => {
      const stopMeter = await meter();
      const r = await enqueueAll(jobIds, offset, rate);
      await waitDone(queue, enqueued.length, timeoutFor(r.ready.size), children);
      return { ...r, end: now(), cpu: await stopMeter() };
    };

    // Each phase has its own task indexes, so that one job's tasks of different phases never share an id.
    await runPhase(o.jobIds.slice(0, o.warmupJobs), 2 * o.tasksPerJob);
    const burst = await runPhase(o.jobIds, 0);
    const steady = await runPhase(o.jobIds.slice(0, o.steadyJobs), o.tasksPerJob, o.rate);
    const serverCpuSeconds = (await server()) - serverStart;

    // Stopped workers write their records; then every task must have run exactly once.
    for (const c of children.splice(0)) await c.stop();
    const records = await Promise.all(
      outFiles.map(
        async (f) =>
          JSON.parse(
            await readFile(f, 'utf8').catch(() => {
              throw new Error(`a worker process left no records in ${f}: it died or was killed (see its output above)`);
            }),
          ) as WorkerRecords,
      ),
    );
    const byId = indexRecords(records);
    checkExactlyOnce(enqueued, byId);
    const c = await queue.counts();
    if (c.done !== enqueued.length || c.queued + c.running + c.failed > 0) {
      throw new Error(
        `the queue reports ${JSON.stringify(c)} after ${enqueued.length} tasks ran once each: its counts ` +
          `disagree with the workers`,
      );
    }
    const result = (p: typeof burst): PhaseResult => {
      const s = phaseStats(p.ready, p, byId, records, o.processes * o.lanes);
      return { ...s, ...p.cpu, enqueueRate: s.tasks / s.enqueueSeconds };
    };
    return { engine, phases: { burst: result(burst), steady: result(steady) }, serverCpuSeconds };
  } finally {
    for (const c of children) await c.stop();
    await opened?.close();
    await cleanup();
  }
}
