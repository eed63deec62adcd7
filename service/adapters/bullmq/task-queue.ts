// The TaskQueue port on BullMQ (Redis), for services that scale out: one BullMQ queue per task
// kind, jobs fetched by hand with the claiming worker's id as lock token, the lock being the
// lease. What BullMQ does not model (attempts as the port counts them, joins, cancel, the job
// index, blocklist counters, the claim order: priority, fair share, pause) is kept next to it under
// the same prefix, see lua.ts and lua-common.ts; a task reaches BullMQ only when a claim takes it.
import type { Redis } from 'ioredis';
import { framesOf } from '../../domain/task-runs.js';
import { claimTask, handOver, type ClaimContext } from './claim.js';
import type { EnqueueTask, Task, TaskInfo, TaskKind, TaskQueue, TaskRun } from '../../ports/tasks.js';
import { ENQUEUE_BATCH, enqueueBatch } from './enqueue-batch.js';
import type { DependencyWakes } from '../../ports/dependency-waits.js';
import { bullJobId, keySpace, type KeySpace } from './keys.js';
import { closeLanes, laneOf, openLanes, type Lane } from './lanes.js';
import { closeRedis, connectRedis, redactError, redactRedisUrl, withDeadline } from './redis-client.js';
import type { BullmqTaskQueueOptions } from './options.js';
import { jobRuns, QueueScripts } from './scripts.js';
import { kindCounts, queueCounts } from './counts.js';
import { groupLoads, queueAhead } from './queue-order.js';
import { topWaiting } from './waiting-priority.js';
import { takeHandBackPlace } from './hand-back-places.js';
import type { WaitingTop } from '../../ports/waiting-priority.js';
import type { GroupQueueLoad, QueueAheadCounts } from '../../ports/queue-order.js';
import { ReadySignal } from '../ready-signal.js';
import { RedisSignalBus } from './signals.js';
import { cancelJobTasks, completeTask, failTask, releaseTask, TaskHandles, type SettleContext } from './settle.js';

export class BullmqTaskQueue implements TaskQueue, DependencyWakes {
  private readonly claims: ClaimContext;
  private readonly settles: SettleContext;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly client: Redis,
    private readonly keys: KeySpace,
    private readonly lanes: Map<TaskKind, Lane>,
    private readonly scripts: QueueScripts,
    private readonly redisUrl: string,
    private readonly opts: { callTimeoutMs: number; handOverGraceMs: number; now: () => number },
    private readonly signal: ReadySignal,
  ) {
    const handles = new TaskHandles(client, keys, lanes);
    this.claims = {
      lanes,
      scripts,
      signal,
      handOverGraceMs: opts.handOverGraceMs,
      now: opts.now,
      remember: (id, kind) => handles.remember(id, kind),
    };
    this.settles = { handles, lanes, scripts, signal, now: opts.now };
  }

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
        {
          callTimeoutMs: opts.callTimeoutMs ?? 15_000,
          handOverGraceMs: opts.handOverGraceMs ?? 10_000,
          now: opts.now ?? Date.now,
        },
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
    priority?: number;
    shareGroup?: string;
  }): Promise<void> {
    this.lane(t.kind);
    if (t.priority !== undefined && !Number.isInteger(t.priority))
      throw new Error(`a priority must be an integer (got ${t.priority})`);
    await this.call('enqueue', async () => {
      const r = await this.scripts.enqueue({
        bid: bullJobId(t.id),
        id: t.id,
        jobId: t.jobId,
        kind: t.kind,
        payload: JSON.stringify(t.payload ?? {}),
        after: (t.after ?? []).map(bullJobId),
        priority: t.priority,
        shareGroup: t.shareGroup,
        frames: framesOf(t.payload ?? null)?.length ?? 0,
      });
      if (r === 'queued') this.signal.notify(t.kind);
      else if (typeof r === 'object') await handOver(this.claims, [r]);
    });
  }

  /** One round trip per ENQUEUE_BATCH tasks (enqueue-batch.ts), each batch all or none. */
  async enqueueMany(tasks: readonly EnqueueTask[]): Promise<void> {
    for (const t of tasks) {
      this.lane(t.kind);
      if (t.priority !== undefined && !Number.isInteger(t.priority))
        throw new Error(`a priority must be an integer (got ${t.priority})`);
    }
    for (let i = 0; i < tasks.length; i += ENQUEUE_BATCH) {
      const batch = tasks.slice(i, i + ENQUEUE_BATCH);
      await this.call('enqueueMany', async () => {
        const r = await enqueueBatch(this.scripts, batch);
        for (const kind of r.queued) this.signal.notify(kind);
        await handOver(this.claims, r.handOvers);
      });
    }
  }

  async claim(workerId: string, kinds: readonly TaskKind[], leaseMs: number): Promise<Task | undefined> {
    if (kinds.length === 0) return undefined;
    for (const k of kinds) this.lane(k);
    return this.call('claim', () => claimTask(this.claims, workerId, kinds, leaseMs));
  }

  async extendLease(taskId: string, workerId: string, leaseMs: number): Promise<boolean> {
    return this.call('extendLease', async () => {
      const kind = await this.settles.handles.kindOf(taskId);
      if (!kind) return false;
      const bid = bullJobId(taskId);
      const refused = await this.lane(kind).worker.extendJobLocks([bid], [workerId], leaseMs);
      return refused.length === 0 && (await this.scripts.extended(bid, workerId, leaseMs));
    });
  }

  async complete(taskId: string, workerId: string): Promise<void> {
    await this.call('complete', () => completeTask(this.settles, taskId, workerId));
  }

  async release(
    taskId: string,
    workerId: string,
    opts: { delayMs?: number; waitFor?: readonly string[] } = {},
  ): Promise<void> {
    await this.call('release', () => releaseTask(this.settles, taskId, workerId, opts));
  }

  async jobEnded(jobId: string): Promise<void> {
    for (const kind of await this.call('jobEnded', () => this.scripts.jobEnded(jobId))) this.signal.notify(kind);
  }

  async fail(
    taskId: string,
    workerId: string,
    o: { retryable: boolean; message: string; retryAfterMs?: number },
  ): Promise<void> {
    await this.call('fail', () => failTask(this.settles, taskId, workerId, o));
  }

  async cancelJob(jobId: string): Promise<number> {
    return this.call('cancelJob', () => cancelJobTasks(this.settles, jobId));
  }

  async jobTasks(jobId: string): Promise<TaskInfo[]> {
    const rows = await this.call('jobTasks', () => this.scripts.jobTasks(jobId));
    return rows.map((r) => ({ ...r, state: r.state === 'held' || r.state === 'paused' ? 'queued' : r.state }));
  }

  async jobTaskRuns(jobId: string): Promise<TaskRun[]> {
    return this.call('jobTaskRuns', () => jobRuns(this.scripts, jobId));
  }

  async counts(): Promise<{ queued: number; running: number; done: number; failed: number }> {
    return this.call('counts', () => queueCounts(this.client, this.keys, this.lanes));
  }

  async countsByKind(): Promise<Record<TaskKind, { queued: number; running: number }>> {
    return this.call('countsByKind', () => kindCounts(this.client, this.keys, this.lanes, this.scripts));
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

  async setJobPriority(jobId: string, priority: number): Promise<number> {
    if (!Number.isInteger(priority)) throw new Error(`a priority must be an integer (got ${priority})`);
    return this.call('setJobPriority', () => this.scripts.setPriority(jobId, priority));
  }

  async pauseJob(jobId: string): Promise<number> {
    return this.call('pauseJob', () => this.scripts.pause(jobId));
  }

  async resumeJob(jobId: string): Promise<number> {
    const { n, kinds } = await this.call('resumeJob', () => this.scripts.resume(jobId));
    for (const kind of kinds) this.signal.notify(kind);
    return n;
  }

  async setShareWeight(group: string, weight: number): Promise<void> {
    if (!(weight > 0) || !Number.isFinite(weight))
      throw new Error(`a share weight must be a positive number (got ${weight} for ${JSON.stringify(group)})`);
    await this.call('setShareWeight', () => this.scripts.setWeight(group, weight));
  }

  async shareWeights(): Promise<Record<string, number>> {
    const raw = await this.call('shareWeights', () => this.client.hgetall(`${this.keys.own}weights`));
    return Object.fromEntries(Object.entries(raw).map(([g, w]) => [g, Number(w)]));
  }

  queueAhead(jobId: string): Promise<QueueAheadCounts | null> {
    return this.call('queueAhead', () => queueAhead(this.client, this.keys, jobId));
  }

  groupLoads(): Promise<GroupQueueLoad[]> {
    return this.call('groupLoads', () => groupLoads(this.client, this.keys));
  }

  topWaiting(kinds: readonly TaskKind[]): Promise<WaitingTop | undefined> {
    return this.call('topWaiting', () => topWaiting(this.client, this.keys, kinds));
  }

  takeHandBackPlace(jobId: string, kinds: readonly TaskKind[], holder: string, ttlMs: number): Promise<boolean> {
    const o = { jobId, kinds, holder, ttlMs };
    return this.call('takeHandBackPlace', () => takeHandBackPlace(this.client, this.keys, o));
  }

  async close(): Promise<void> {
    this.closing ??= (async () => {
      await this.signal.close();
      await closeLanes(this.lanes);
      await closeRedis(this.client, 2000);
    })();
    await this.closing;
  }

  private lane(kind: TaskKind): Lane {
    return laneOf(this.lanes, kind);
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
