// The TaskQueue port on BullMQ (Redis), for services that scale out: one BullMQ queue per task
// kind, jobs fetched by hand with the claiming worker's id as lock token, the lock being the
// lease. What BullMQ does not model (attempts as the port counts them, joins, cancel, the job
// index, blocklist counters) is kept next to it under the same prefix, see lua.ts.
import type { Redis } from 'ioredis';
import { Job, UnrecoverableError } from 'bullmq';
import type { Task, TaskInfo, TaskKind, TaskQueue, TaskRun } from '../../ports/tasks.js';
import { TASK_KINDS } from '../../ports/tasks.js';
import { bullJobId, keySpace, type KeySpace } from './keys.js';
import { closeLanes, openLanes, type Lane, type TaskData } from './lanes.js';
import {
  closeRedis,
  connectRedis,
  redactError,
  redactRedisUrl,
  withDeadline,
  type RedisClientOptions,
} from './redis-client.js';
import { jobRuns, QueueScripts, type HandOver } from './scripts.js';
import { ReadySignal } from '../ready-signal.js';
import { RedisSignalBus } from './signals.js';

export interface BullmqTaskQueueOptions extends RedisClientOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://`) of the Redis that holds the queue. */
  redisUrl: string;
  /** Start of every key the queue writes; instances sharing a prefix share the queue. Default 'renderbridge'. */
  prefix?: string;
  /** Longest one port call may take before it fails (Redis down). Default 15000 ms. */
  callTimeoutMs?: number;
  /**
   * Period of BullMQ's stalled-job sweep, the safety net that re-queues a task whose claim died
   * before its lease was recorded. Expired leases themselves are found at claim time. Default 30000 ms.
   */
  stalledIntervalMs?: number;
  /**
   * A task handed to BullMQ (new, or freed by the tasks it waited for) that BullMQ still lacks
   * after this long is handed over again at claim time: the first try was cut short by a crash or
   * an outage. Default 10000 ms.
   */
  handOverGraceMs?: number;
  /** Gets background errors (connection lost, reconnect failed), password removed. Default: dropped. */
  onError?: (err: Error) => void;
}
/** Canceled tasks one claim removes from a queue before it gives up for this call. */
const MAX_DISCARDS = 25;
/** Task kinds remembered from claims (saves a lookup when settling); oldest forgotten first. */
const KIND_CACHE_SIZE = 10_000;

export class BullmqTaskQueue implements TaskQueue {
  private readonly kindCache = new Map<string, TaskKind>();
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly client: Redis,
    private readonly keys: KeySpace,
    private readonly lanes: Map<TaskKind, Lane>,
    private readonly scripts: QueueScripts,
    private readonly redisUrl: string,
    private readonly opts: { callTimeoutMs: number; handOverGraceMs: number },
    private readonly signal: ReadySignal,
  ) {}

  /** Idle claimers of every process sharing the queue hear of ready tasks at once (Redis pub/sub). */
  onReady(listener: (kind: TaskKind) => void): () => void {
    return this.signal.onReady(listener);
  }

  /** Connects (failing within `connectTimeoutMs` when Redis is unreachable) and sets up the kinds' queues. */
  static async open(opts: BullmqTaskQueueOptions): Promise<BullmqTaskQueue> {
    const keys = keySpace(opts.prefix ?? 'renderbridge');
    const onError = opts.onError ?? (() => {});
    const client = await connectRedis(opts.redisUrl, { ...opts, name: `${keys.bullPrefix}:task-queue`, onError });
    try {
      const lanes = await openLanes(client, keys, {
        stalledIntervalMs: opts.stalledIntervalMs ?? 30_000,
        onError: (e) => onError(redactError(e, opts.redisUrl)),
      });
      const signal = new ReadySignal(new RedisSignalBus(client, `${keys.own}ready`, opts.redisUrl, onError), onError);
      return new BullmqTaskQueue(
        client,
        keys,
        lanes,
        new QueueScripts(client, keys),
        opts.redisUrl,
        { callTimeoutMs: opts.callTimeoutMs ?? 15_000, handOverGraceMs: opts.handOverGraceMs ?? 10_000 },
        signal,
      );
    } catch (err) {
      await closeRedis(client, 1000);
      throw redactError(err, opts.redisUrl);
    }
  }

  async enqueue(t: {
    id: string;
    jobId: string;
    kind: TaskKind;
    payload?: Record<string, unknown>;
    after?: readonly string[];
  }): Promise<void> {
    this.lane(t.kind);
    await this.call('enqueue', async () => {
      const r = await this.scripts.enqueue({
        bid: bullJobId(t.id),
        id: t.id,
        jobId: t.jobId,
        kind: t.kind,
        payload: JSON.stringify(t.payload ?? {}),
        after: (t.after ?? []).map(bullJobId),
      });
      if (typeof r === 'object') await this.handOver([r]);
    });
  }

  async claim(workerId: string, kinds: readonly TaskKind[], leaseMs: number): Promise<Task | undefined> {
    if (kinds.length === 0) return undefined;
    for (const k of kinds) this.lane(k);
    return this.call('claim', async () => {
      // One kind needs no ordering: its fetch goes out together with preclaim (one round trip).
      const single = kinds.length === 1 ? kinds[0] : undefined;
      const [pre, early] = await Promise.all([
        this.scripts.preclaim(kinds, this.opts.handOverGraceMs),
        single ? this.fetch(single, workerId, leaseMs) : undefined,
      ]);
      await this.handOver(pre.handOvers);
      // Leases that ran out: BullMQ's own stalled sweep moves those jobs back to wait.
      for (const kind of pre.sweep) await this.lane(kind).worker.getBackend().moveStalledJobsToWait();
      if (early) return early;
      if (single && pre.sweep.length === 0 && pre.handOvers.length === 0) return undefined;
      // Oldest ready task first across the kinds; kinds that just got tasks back come after.
      const ready = kinds.map((kind, i) => ({ kind, seq: pre.order[i] ?? -1 })).filter((k) => k.seq >= 0);
      ready.sort((a, b) => a.seq - b.seq);
      const order = [...new Set([...ready.map((k) => k.kind), ...pre.sweep, ...pre.handOvers.map((h) => h.kind)])];
      for (const kind of order) {
        if (!kinds.includes(kind)) continue;
        const task = await this.fetch(kind, workerId, leaseMs);
        if (task) return task;
      }
      return undefined;
    });
  }

  async extendLease(taskId: string, workerId: string, leaseMs: number): Promise<boolean> {
    return this.call('extendLease', async () => {
      const kind = await this.kindOf(taskId);
      if (!kind) return false;
      const bid = bullJobId(taskId);
      const refused = await this.lane(kind).worker.extendJobLocks([bid], [workerId], leaseMs);
      return refused.length === 0 && (await this.scripts.extended(bid, workerId, leaseMs));
    });
  }

  async complete(taskId: string, workerId: string): Promise<void> {
    await this.call('complete', async () => {
      const job = await this.bullJob(taskId);
      if (!job || !(await asHolder(() => job.moveToCompleted(null, workerId, false)))) return;
      this.kindCache.delete(taskId);
      await this.handOver(await this.scripts.completed(job.id!));
    });
  }

  async release(taskId: string, workerId: string, opts: { delayMs?: number } = {}): Promise<void> {
    await this.call('release', async () => {
      const job = await this.bullJob(taskId);
      if (!job || !(await asHolder(() => job.moveToDelayed(Date.now() + (opts.delayMs ?? 0), workerId)))) return;
      this.kindCache.delete(taskId);
      await this.scripts.requeued(job.id!, workerId, 'release');
      if (!opts.delayMs) this.signal.notify(job.name as TaskKind);
    });
  }

  async fail(
    taskId: string,
    workerId: string,
    o: { retryable: boolean; message: string; retryAfterMs?: number },
  ): Promise<void> {
    await this.call('fail', async () => {
      const job = await this.bullJob(taskId);
      if (!job) return;
      if (o.retryable) {
        if (!(await asHolder(() => job.moveToDelayed(Date.now() + (o.retryAfterMs ?? 0), workerId)))) return;
        await this.scripts.requeued(job.id!, workerId, 'retry', o.message);
      } else {
        if (!(await asHolder(() => job.moveToFailed(new UnrecoverableError(o.message), workerId, false)))) return;
        await this.scripts.failed(job.id!, o.message);
      }
      this.kindCache.delete(taskId);
    });
  }

  async cancelJob(jobId: string): Promise<number> {
    return this.call('cancelJob', async () => {
      // Canceled in the adapter's state first: a worker that fetches one of these before BullMQ
      // lets go of it finds it canceled and drops it; a holder's settle becomes a no-op.
      const canceled = await this.scripts.cancel(jobId);
      for (const c of canceled) {
        if (c.previous === 'held') continue;
        const { worker, queue } = this.lane(c.kind);
        if (c.previous === 'running' && c.holder) {
          const job = new Job<TaskData, unknown, string>(worker, c.kind, { jobId, payload: {} }, {}, c.bid);
          await asHolder(() => job.moveToFailed(new UnrecoverableError('job canceled'), c.holder, false));
        }
        await queue.remove(c.bid);
      }
      return canceled.length;
    });
  }

  async jobTasks(jobId: string): Promise<TaskInfo[]> {
    const rows = await this.call('jobTasks', () => this.scripts.jobTasks(jobId));
    return rows.map((r) => ({ ...r, state: r.state === 'held' ? 'queued' : r.state }));
  }

  async jobTaskRuns(jobId: string): Promise<TaskRun[]> {
    return this.call('jobTaskRuns', () => jobRuns(this.scripts, jobId));
  }

  async counts(): Promise<{ queued: number; running: number; done: number; failed: number }> {
    return this.call('counts', async () => {
      const [held, ...perKind] = await Promise.all([
        this.client.scard(`${this.keys.own}held`),
        ...[...this.lanes.values()].map((l) =>
          l.queue.getJobCounts('waiting', 'delayed', 'prioritized', 'active', 'completed', 'failed'),
        ),
      ]);
      const sum = (...types: string[]) => perKind.reduce((n, c) => n + types.reduce((m, t) => m + (c[t] ?? 0), 0), 0);
      return {
        queued: held + sum('waiting', 'delayed', 'prioritized'),
        running: sum('active'),
        done: sum('completed'),
        failed: sum('failed'),
      };
    });
  }

  async countsByKind(): Promise<Record<TaskKind, { queued: number; running: number }>> {
    return this.call('countsByKind', async () => {
      const kinds = [...this.lanes.keys()];
      const [heldKinds, ...perKind] = await Promise.all([
        this.scripts.heldKinds(),
        ...kinds.map((k) => this.lane(k).queue.getJobCounts('waiting', 'delayed', 'prioritized', 'active')),
      ]);
      const out = Object.fromEntries(TASK_KINDS.map((k) => [k, { queued: 0, running: 0 }])) as Record<
        TaskKind,
        { queued: number; running: number }
      >;
      kinds.forEach((k, i) => {
        const c = perKind[i]!;
        out[k] = { queued: (c.waiting ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0), running: c.active ?? 0 };
      });
      // Tasks waiting for others (a finalize behind its chunks) are queued too, though BullMQ has not got them yet.
      for (const k of heldKinds) if (out[k as TaskKind]) out[k as TaskKind].queued++;
      return out;
    });
  }

  async recordFailure(jobId: string, worker: string): Promise<number> {
    return this.call('recordFailure', () => this.client.hincrby(`${this.keys.own}fail:${jobId}`, worker, 1));
  }

  async jobFailures(jobId: string): Promise<Record<string, number>> {
    const raw = await this.call('jobFailures', () => this.client.hgetall(`${this.keys.own}fail:${jobId}`));
    return Object.fromEntries(Object.entries(raw).map(([w, n]) => [w, Number(n)]));
  }

  async pruneFinished(before: Date, limit: number): Promise<number> {
    return this.call('pruneFinished', async () => {
      const gone = await this.scripts.prune(before.getTime(), limit);
      // BullMQ's own copy: a job some worker still holds (a task canceled while it ran) stays
      // locked and is left; it is a few hundred bytes.
      await Promise.all(gone.map(({ bid, kind }) => this.lane(kind).queue.remove(bid)));
      return gone.length;
    });
  }

  setJobPriority(): Promise<number> {
    throw new Error('not yet');
  }
  pauseJob(): Promise<number> {
    throw new Error('not yet');
  }
  resumeJob(): Promise<number> {
    throw new Error('not yet');
  }
  setShareWeight(): Promise<void> {
    throw new Error('not yet');
  }
  shareWeights(): Promise<Record<string, number>> {
    throw new Error('not yet');
  }

  async close(): Promise<void> {
    this.closing ??= (async () => {
      await this.signal.close();
      await closeLanes(this.lanes);
      await closeRedis(this.client, 2000);
    })();
    await this.closing;
  }

  /** Takes the next job of `kind` for `workerId`, dropping canceled ones on the way. */
  private async fetch(kind: TaskKind, workerId: string, leaseMs: number): Promise<Task | undefined> {
    const { worker, queue } = this.lane(kind);
    for (let i = 0; i < MAX_DISCARDS; i++) {
      const job = await worker.getNextJob(workerId, { block: false });
      if (!job?.id) return undefined;
      const r = await this.scripts.claimed(job.id, kind, workerId, leaseMs);
      if (r === 'lost') continue;
      if (r === 'discard') {
        await asHolder(() => job.moveToFailed(new UnrecoverableError('task canceled'), workerId, false));
        await queue.remove(job.id);
        continue;
      }
      this.rememberKind(r.id, kind);
      return { id: r.id, jobId: r.jobId, kind, payload: job.data.payload ?? {}, attempts: r.attempts };
    }
    return undefined;
  }

  /**
   * Hands tasks to BullMQ. A job id BullMQ has already is not added twice, so a hand-over that
   * preclaim repeats (it found no BullMQ job after the grace) is safe.
   */
  private async handOver(list: readonly HandOver[]): Promise<void> {
    for (const h of list) {
      const data: TaskData = { jobId: h.jobId, payload: JSON.parse(h.payload) as Record<string, unknown> };
      await this.lane(h.kind).queue.add(h.kind, data, { jobId: h.bid });
      this.signal.notify(h.kind);
    }
  }

  /** A handle on the task's BullMQ job for settling it (no fetch: settling needs only id and queue). */
  private async bullJob(taskId: string): Promise<Job<TaskData, unknown, string> | undefined> {
    const kind = await this.kindOf(taskId);
    if (!kind) return undefined;
    return new Job<TaskData, unknown, string>(
      this.lane(kind).worker,
      kind,
      { jobId: '', payload: {} },
      {},
      bullJobId(taskId),
    );
  }

  private async kindOf(taskId: string): Promise<TaskKind | undefined> {
    const known = this.kindCache.get(taskId);
    if (known) return known;
    const kind = await this.client.hget(`${this.keys.own}t:${bullJobId(taskId)}`, 'k');
    return kind && (TASK_KINDS as readonly string[]).includes(kind) ? (kind as TaskKind) : undefined;
  }

  private rememberKind(taskId: string, kind: TaskKind): void {
    this.kindCache.set(taskId, kind);
    if (this.kindCache.size > KIND_CACHE_SIZE) this.kindCache.delete(this.kindCache.keys().next().value!);
  }

  private lane(kind: TaskKind): Lane {
    const lane = this.lanes.get(kind);
    if (!lane)
      throw new Error(
        `unknown task kind ${JSON.stringify(kind)}; the BullMQ task queue knows ${TASK_KINDS.join(', ')}`,
      );
    return lane;
  }

  /** Runs one port call within callTimeoutMs; errors name the call and Redis, never its password. */
  private async call<T>(op: string, fn: () => Promise<T>): Promise<T> {
    if (this.closing) throw new Error(`BullMQ task queue: ${op} after close()`);
    const ms = this.opts.callTimeoutMs;
    try {
      return await withDeadline(fn(), ms, `no answer within ${ms} ms`);
    } catch (err) {
      const reason = redactError(err, this.redisUrl).message;
      throw new Error(`BullMQ task queue: ${op} failed (Redis at ${redactRedisUrl(this.redisUrl)}): ${reason}`, {
        cause: err,
      });
    }
  }
}

/** Runs a BullMQ move that checks the lock; false when the caller does not hold it (BullMQ's negative codes). */
async function asHolder(move: () => Promise<unknown>): Promise<boolean> {
  try {
    await move();
    return true;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'number' && code < 0) return false;
    throw err;
  }
}
