// Typed calls of the adapter's Lua scripts (lua.ts). ioredis runs them by SHA and reloads them
// by itself after a Redis restart emptied the script cache.
import type { Redis } from 'ioredis';
import type { TaskKind, TaskRun, TaskState } from '../../ports/tasks.js';
import { framesOf } from '../../domain/task-runs.js';
import type { KeySpace } from './keys.js';
import { SCRIPTS, type ScriptName } from './lua.js';

/** A task to hand to BullMQ: its BullMQ id, kind, job and payload JSON. */
export interface HandOver {
  bid: string;
  kind: TaskKind;
  jobId: string;
  payload: string;
}

export interface Preclaim {
  /** Kinds whose stalled set got tasks with a lease that ran out: BullMQ's sweep re-queues them. */
  sweep: TaskKind[];
  handOvers: HandOver[];
  /** Per kind asked for, the enqueue order of its next ready task in BullMQ; -1: none ready. */
  order: number[];
  /** The first task in the claim order of the kinds asked for, to hand to BullMQ and fetch; none when idle. */
  took?: HandOver;
}

export interface CanceledTask {
  bid: string;
  kind: TaskKind;
  previous: 'held' | 'queued' | 'running' | 'paused';
  holder: string;
}

export interface StoredTaskInfo {
  id: string;
  kind: TaskKind;
  state: TaskState | 'held' | 'paused';
  attempts: number;
  lastError: string | null;
}

type Reply = string | number | null | Reply[];
type ScriptFn = (...args: (string | number)[]) => Promise<Reply>;

export class QueueScripts {
  private readonly fns: Record<ScriptName, ScriptFn>;

  constructor(
    client: Redis,
    private readonly keys: KeySpace,
  ) {
    for (const [name, lua] of Object.entries(SCRIPTS)) client.defineCommand(name, { numberOfKeys: 0, lua });
    const commands = client as unknown as Record<ScriptName, ScriptFn>;
    this.fns = Object.fromEntries(
      Object.keys(SCRIPTS).map((n) => [n, commands[n as ScriptName].bind(client)]),
    ) as Record<ScriptName, ScriptFn>;
  }

  private run(name: ScriptName, ...args: (string | number)[]): Promise<Reply> {
    return this.fns[name](this.keys.own, this.keys.bull, ...args);
  }

  /** A script's raw reply, for reads kept beside this class (jobRuns). */
  runRaw(name: ScriptName, ...args: (string | number)[]): Promise<Reply> {
    return this.run(name, ...args);
  }

  /**
   * Stores a new task: 'queued' in the claim order, 'held' (dependencies, paused job), 'exists', or
   * a hand-over when BullMQ must get an existing task now.
   */
  async enqueue(t: {
    bid: string;
    id: string;
    jobId: string;
    kind: TaskKind;
    payload: string;
    after: readonly string[];
    priority: number | undefined;
    shareGroup: string | undefined;
    frames: number;
  }): Promise<HandOver | 'queued' | 'held' | 'exists'> {
    const r = (await this.run(
      'rbtqEnqueue',
      t.bid,
      t.id,
      t.jobId,
      t.kind,
      t.payload,
      t.priority === undefined ? '' : String(t.priority),
      t.shareGroup === undefined ? '' : `g:${t.shareGroup}`,
      t.frames,
      ...t.after,
    )) as Reply[];
    if (r[0] === 0) return 'exists';
    if (r[0] === 1) return 'held';
    if (r[0] === 3) return 'queued';
    return { bid: t.bid, kind: r[1] as TaskKind, jobId: String(r[2]), payload: String(r[3]) };
  }

  async preclaim(kinds: readonly TaskKind[], handOverGraceMs: number): Promise<Preclaim> {
    const [sweep, adds, order, took] = (await this.run('rbtqPreclaim', handOverGraceMs, ...kinds)) as [
      Reply[],
      Reply[][],
      Reply[],
      Reply[],
    ];
    return {
      sweep: sweep as TaskKind[],
      handOvers: adds.map(toHandOver),
      order: order.map(Number),
      ...(took.length ? { took: toHandOver(took) } : {}),
    };
  }

  /** Counts the attempt of a task BullMQ just made active; what the worker gets, or why it must not run. */
  async claimed(
    bid: string,
    kind: TaskKind,
    workerId: string,
    leaseMs: number,
    now: number,
  ): Promise<{ attempts: number; id: string; jobId: string } | 'discard' | 'lost'> {
    const r = (await this.run('rbtqClaimed', bid, kind, workerId, leaseMs, now)) as Reply[];
    if (r[0] === 0) return 'discard';
    if (r[0] === -1) return 'lost';
    return { attempts: Number(r[0]), id: String(r[1]), jobId: String(r[2]) };
  }

  async extended(bid: string, workerId: string, leaseMs: number): Promise<boolean> {
    return (await this.run('rbtqExtended', bid, workerId, leaseMs)) === 1;
  }

  /** Settles a task BullMQ completed (`now`: the adapter's clock); the kinds of the tasks it freed. */
  async completed(bid: string, now: number): Promise<TaskKind[]> {
    return ((await this.run('rbtqCompleted', bid, now)) as Reply[][]).map((r) => r[1] as TaskKind);
  }

  async failed(bid: string, message: string, now: number): Promise<void> {
    await this.run('rbtqFailed', bid, message, now);
  }

  /** After BullMQ moved the task back to delayed; `due`: handed back without delay (lua.ts REQUEUED). */
  async requeued(bid: string, workerId: string, how: 'release' | 'retry', message: string, now: number, due: boolean) {
    await this.run('rbtqRequeued', bid, workerId, how, message, now, due ? '1' : '0');
  }

  /**
   * After a release: the task waits for `jobIds` (lua-waits.ts). 'woken' when one had ended already
   * (the task is due now), 'waiting', or 'gone' when the task is not waiting in the queue.
   */
  async wait(bid: string, kind: TaskKind, jobIds: readonly string[]): Promise<'woken' | 'waiting' | 'gone'> {
    const r = Number(await this.run('rbtqWait', bid, kind, ...jobIds));
    return r === 2 ? 'woken' : r === 1 ? 'waiting' : 'gone';
  }

  /** Records that the job ended and makes its waiting tasks due; the kinds now claimable. */
  async jobEnded(jobId: string): Promise<TaskKind[]> {
    return ((await this.run('rbtqJobEnded', jobId)) as Reply[]).map((k) => k as TaskKind);
  }

  /** Sets the job's priority; how many of its waiting tasks changed. */
  async setPriority(jobId: string, priority: number): Promise<number> {
    return Number(await this.run('rbtqSetPriority', jobId, String(priority)));
  }

  /** Sets a group's weight and re-tags its waiting tasks (lua-weights.ts); how many moved. */
  async setWeight(group: string, weight: number): Promise<number> {
    return Number(await this.run('rbtqSetWeight', group, String(weight)));
  }

  async pause(jobId: string): Promise<number> {
    return Number(await this.run('rbtqPause', jobId));
  }

  /** Resumes the job: how many tasks are queued again, and their kinds. */
  async resume(jobId: string): Promise<{ n: number; kinds: TaskKind[] }> {
    const [n, ...kinds] = (await this.run('rbtqResume', jobId)) as Reply[];
    return { n: Number(n), kinds: kinds as TaskKind[] };
  }

  async cancel(jobId: string): Promise<CanceledTask[]> {
    const r = (await this.run('rbtqCancel', jobId)) as Reply[][];
    return r.map(([bid, kind, previous, holder]) => ({
      bid: String(bid),
      kind: kind as TaskKind,
      previous: previous as CanceledTask['previous'],
      holder: String(holder),
    }));
  }

  /** Forgets tasks finished before `beforeMs`; the BullMQ jobs to remove. */
  async prune(beforeMs: number, limit: number): Promise<{ bid: string; kind: TaskKind }[]> {
    const r = (await this.run('rbtqPrune', beforeMs, limit)) as Reply[][];
    return r.map(([bid, kind]) => ({ bid: String(bid), kind: kind as TaskKind }));
  }

  /** The kind of each task held for its dependencies (one entry per task). */
  async heldKinds(): Promise<string[]> {
    return ((await this.run('rbtqHeldKinds')) as Reply[]).map(String);
  }

  async jobTasks(jobId: string): Promise<StoredTaskInfo[]> {
    const r = (await this.run('rbtqJobTasks', jobId)) as Reply[][];
    return r.map(([id, kind, state, attempts, lastError]) => ({
      id: String(id),
      kind: kind as TaskKind,
      state: state as StoredTaskInfo['state'],
      attempts: Number(attempts),
      lastError: lastError === null ? null : String(lastError),
    }));
  }
}

/** The payload text out of what JOB_RUNS found: the task's own copy, or BullMQ's job data around it. */
function payloadText(src: Reply, text: Reply): string | null {
  if (typeof text !== 'string') return null;
  if (src === 'p') return text;
  try {
    return JSON.stringify((JSON.parse(text) as { payload?: unknown }).payload ?? null);
  } catch {
    return null;
  }
}

const orNull = (v: Reply): string | null =>
  v === null || v === undefined || (v as unknown) === false ? null : String(v);

/** A job's tasks as TaskRunReader answers them (times from Redis's clock). */
export async function jobRuns(scripts: QueueScripts, jobId: string): Promise<TaskRun[]> {
  const r = (await scripts.runRaw('rbtqJobRuns', jobId)) as Reply[][];
  const iso = (v: Reply | undefined) => (orNull(v ?? null) === null ? null : new Date(Number(v)).toISOString());
  return r.map(([id, kind, state, attempts, lastError, holder, runner, started, finished, src, text]) => {
    const st = state === 'held' || state === 'paused' ? 'queued' : (state as TaskState);
    return {
      id: String(id),
      kind: kind as TaskKind,
      state: st,
      attempts: Number(attempts),
      lastError: orNull(lastError ?? null),
      frames: framesOf(payloadText(src ?? null, text ?? null)),
      worker: orNull(holder ?? null) ?? orNull(runner ?? null),
      startedAt: iso(started),
      finishedAt: st === 'done' || st === 'failed' || st === 'canceled' ? iso(finished) : null,
    };
  });
}

function toHandOver(r: Reply[]): HandOver {
  return { bid: String(r[0]), kind: r[1] as TaskKind, jobId: String(r[2]), payload: String(r[3]) };
}
