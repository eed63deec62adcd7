// Numbers of bench:scale: per-task times from the producer and the worker processes, turned into
// throughput and delay percentiles, and the check that every task ran exactly once.
import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';

/**
 * Wall-clock milliseconds with sub-millisecond resolution, comparable across processes of one
 * machine: each process's timeOrigin is the system clock at its start, and performance.now()
 * counts from there on the monotonic clock.
 */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

/** What one worker process writes when it stops. */
export interface WorkerRecords {
  name: string;
  /** [task id, handler entered (ms, now()), attempt, lane] */
  started: [string, number, number, string][];
  /** [task id, completion stored (ms, now()), complete() took (ms)] */
  done: [string, number, number][];
  /** Every claim of every lane: [called (ms, now()), took (ms), the task it got or ''] */
  claims: [number, number, string][];
}

/** One task as the records tell it. */
export interface TaskRecord {
  /** When the claim that got it was called, and how long it took (ms). */
  claimAt: number;
  claimMs: number;
  start: number;
  done: number;
  completeMs: number;
  attempt: number;
  /** Index of the worker process that ran it. */
  proc: number;
}

/** Task id -> when it became ready (enqueue() resolved), for one phase. */
export type ReadyTimes = Map<string, number>;

export interface PhaseStats {
  tasks: number;
  /** Seconds from the first enqueue() call to the last one's return. */
  enqueueSeconds: number;
  /** Tasks per second from the first task ready to the last one's completion stored. */
  tasksPerSecond: number;
  /** Ready -> handler entered, ms. */
  p50: number;
  p99: number;
  max: number;
  /** Share of the phase's tasks each worker process ran, in process order. */
  perProcess: number[];
  /** Mean lane time per task, ms: claim called to completion stored; and its claim and complete() parts. */
  laneMs: number;
  claimMs: number;
  completeMs: number;
  /** Share of the render lanes' time spent on tasks over the phase (1: every lane always busy). */
  lanesBusy: number;
  /** Claims that found nothing (idle polls), per second, all lanes together. */
  emptyClaimsPerSecond: number;
}

/** Nearest-rank percentile (p in 0..100) of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Every record of the run, by task id; throws when a task ran or completed more than once. */
export function indexRecords(all: readonly WorkerRecords[]): Map<string, TaskRecord> {
  const byId = new Map<string, TaskRecord>();
  const twice: string[] = [];
  all.forEach((w, proc) => {
    for (const [id, start, attempt] of w.started) {
      if (byId.has(id)) twice.push(id);
      else byId.set(id, { claimAt: NaN, claimMs: NaN, start, done: NaN, completeMs: NaN, attempt, proc });
    }
  });
  for (const w of all) {
    for (const [t, took, id] of w.claims) {
      const r = id ? byId.get(id) : undefined;
      if (id && !r) throw new Error(`task ${id} was claimed but its handler never ran`);
      if (r) Object.assign(r, { claimAt: t, claimMs: took });
    }
  }
  const doneTwice: string[] = [];
  for (const w of all) {
    for (const [id, t, took] of w.done) {
      const r = byId.get(id);
      if (!r) throw new Error(`task ${id} was completed but its handler never ran: the records are broken`);
      if (!Number.isNaN(r.done)) doneTwice.push(id);
      r.done = t;
      r.completeMs = took;
    }
  }
  if (twice.length)
    throw new Error(
      `${twice.length} tasks ran more than once (e.g. ${twice.slice(0, 3).join(', ')}): the queue handed a ` +
        'task out twice',
    );
  if (doneTwice.length)
    throw new Error(`${doneTwice.length} tasks were completed twice (e.g. ${doneTwice.slice(0, 3).join(', ')})`);
  return byId;
}

/**
 * Checks that exactly the enqueued tasks ran, each once, on its first attempt, and were completed;
 * throws naming what is wrong (a benchmark that loses tasks measures nothing).
 */
export function checkExactlyOnce(enqueued: readonly string[], byId: Map<string, TaskRecord>): void {
  const expected = new Set(enqueued);
  if (expected.size !== enqueued.length) throw new Error('the benchmark enqueued a task id twice: fix the id scheme');
  const missing = enqueued.filter((id) => !byId.has(id));
  if (missing.length)
    throw new Error(
      `${missing.length} of ${enqueued.length} tasks never ran (e.g. ${missing.slice(0, 3).join(', ')}): tasks ` +
        'were lost',
    );
  const extra = [...byId.keys()].filter((id) => !expected.has(id));
  if (extra.length)
    throw new Error(`${extra.length} tasks ran that were never enqueued (e.g. ${extra.slice(0, 3).join(', ')})`);
  const retried = [...byId].filter(([, r]) => r.attempt !== 1);
  if (retried.length)
    throw new Error(
      `${retried.length} tasks ran on a later attempt (e.g. ${retried[0]![0]}): a lease ran out or a claim failed`,
    );
  const undone = [...byId].filter(([, r]) => Number.isNaN(r.done));
  if (undone.length)
    throw new Error(`${undone.length} tasks ran but their completion was never stored (e.g. ${undone[0]![0]})`);
}

/** The phase from `firstCall` (its first enqueue) to `end` (all its tasks seen done). */
export function phaseStats(
  ready: ReadyTimes,
  window: { firstCall: number; end: number },
  byId: Map<string, TaskRecord>,
  all: readonly WorkerRecords[],
  renderLanes: number,
): PhaseStats {
  const delays: number[] = [];
  const processes = all.length;
  const mean = { lane: 0, claim: 0, complete: 0 };
  const perProcess = new Array<number>(processes).fill(0);
  let firstReady = Infinity;
  let lastReady = -Infinity;
  let lastDone = -Infinity;
  for (const [id, t] of ready) {
    const r = byId.get(id)!;
    delays.push(r.start - t);
    perProcess[r.proc]! += 1 / ready.size;
    firstReady = Math.min(firstReady, t);
    lastReady = Math.max(lastReady, t);
    lastDone = Math.max(lastDone, r.done);
    mean.lane += (r.done - r.claimAt) / ready.size;
    mean.claim += r.claimMs / ready.size;
    mean.complete += r.completeMs / ready.size;
  }
  delays.sort((a, b) => a - b);
  const seconds = (window.end - window.firstCall) / 1000;
  const idle = all
    .flatMap((w) => w.claims)
    .filter(([t, , id]) => !id && t >= window.firstCall && t <= window.end).length;
  const tasksPerSecond = ready.size / ((lastDone - firstReady) / 1000);
  return {
    tasks: ready.size,
    enqueueSeconds: (lastReady - window.firstCall) / 1000,
    tasksPerSecond,
    p50: percentile(delays, 50),
    p99: percentile(delays, 99),
    max: delays.at(-1)!,
    perProcess,
    laneMs: mean.lane,
    claimMs: mean.claim,
    completeMs: mean.complete,
    // Little's law: tasks in progress = rate x time each; over the lanes that could hold one.
    lanesBusy: (tasksPerSecond * mean.lane) / 1000 / renderLanes,
    emptyClaimsPerSecond: idle / seconds,
  };
}

/** CPU seconds Redis has used so far (INFO cpu: every thread of the server). */
export async function redisCpuSeconds(url: string): Promise<number> {
  const client = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  client.on('error', () => {});
  try {
    await client.connect();
    const info = await client.info('cpu');
    const get = (k: string) => Number(new RegExp(`^${k}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
    return get('used_cpu_user') + get('used_cpu_sys');
  } finally {
    client.disconnect();
  }
}

/**
 * CPU seconds of every process named `postgres` (server and backends), plus what the
 * postmaster has reaped from backends that exited; 0 where PostgreSQL is not local.
 */
export function postgresCpuSeconds(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (comm !== 'postgres') continue;
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks / 100; // USER_HZ
}
