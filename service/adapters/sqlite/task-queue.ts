import { sql } from 'kysely';
import type { EnqueueTask, Task, TaskKind } from '../../ports/tasks.js';
import { enqueueMany, insertValues } from '../sql/task-enqueue.js';
import { SqlTaskQueue } from '../sql/task-queue.js';
import { CommitWatch } from './commit-watch.js';
import type { SqliteHandle } from './db.js';

/** What an empty claim found: nothing changes that until a write, another connection's commit or `dueAt`. */
interface EmptyClaim {
  generation: number;
  version: number;
  /** When a task of these kinds may become claimable by time alone (a retry delay, a lease running out), capped. */
  dueAt: number;
}

/**
 * Writes of the queue per connection, shared by every queue object on it: this connection's own
 * commits never move data_version, so a queue must hear the writes of another queue object on the
 * same connection (the service's API and its in-process workers) through this counter.
 */
const generations = new WeakMap<object, { n: number }>();

/**
 * The longest an empty claim is trusted (default 2000 ms). A write that could free a task outside
 * the queue's own methods (none is known) then delays a claim by at most this long.
 */
export const EMPTY_CLAIM_TRUST_MS = 2000;

/**
 * Durable task queue in the service's SQLite database (queries shared with PostgreSQL in
 * ../sql/task-queue.ts). The claim is one UPDATE: a statement that writes takes SQLite's write
 * lock before it reads, so the pick and the lease are atomic across connections and processes
 * sharing the file, and a claimer that finds the lock taken waits (busy timeout) instead of
 * failing with "database is locked" (see ./write-lock.ts). The database is owned and closed by
 * whoever opened it.
 *
 * SQLite cannot tell other processes of new tasks, so idle lanes poll, five times a second each,
 * beside a render. An empty claim is remembered with what could change its answer: a write of the
 * queue on this connection, a commit of another connection (data_version), or the moment the next
 * task becomes due by time alone; until one of them happens, a claim answers nothing without
 * taking the write lock.
 */
export class SqliteTaskQueue extends SqlTaskQueue {
  private readonly writes: { n: number };
  private readonly empty = new Map<string, EmptyClaim>();
  private readonly commits: CommitWatch;

  /** `now`: the queue's clock (epoch ms). Default Date.now. */
  constructor(sqlite: Pick<SqliteHandle, 'db' | 'raw'>, now: () => number = Date.now) {
    super(sqlite.db, now);
    let writes = generations.get(sqlite.raw);
    if (!writes) generations.set(sqlite.raw, (writes = { n: 0 }));
    this.writes = writes;
    // Read afresh on every claim (2 us): the handle's shared watch may be a millisecond stale, and
    // a claim must see another process's task as soon as it is committed.
    this.commits = new CommitWatch(sqlite.raw, 0);
  }

  override async claim(workerId: string, kinds: readonly TaskKind[], leaseMs: number): Promise<Task | undefined> {
    const key = kinds.join(',');
    const seen = this.empty.get(key);
    const generation = this.writes.n;
    const version = this.commits.version();
    const now = this.now();
    if (seen && seen.generation === generation && seen.version === version && now < seen.dueAt) return undefined;
    const task = await super.claim(workerId, kinds, leaseMs);
    if (task) this.writes.n++;
    if (task || kinds.length === 0) {
      this.empty.delete(key);
      return task;
    }
    // Kept with the generation and version read before the claim: a write meanwhile makes the
    // memo stale at once, never wrongly fresh.
    const dueAt = Math.min(await this.nextDue(kinds, now), now + EMPTY_CLAIM_TRUST_MS);
    this.empty.set(key, { generation, version, dueAt });
    return undefined;
  }

  /**
   * The earliest retry delay or lease end among tasks of `kinds` after `since`, the time read
   * before the claim: a task that fell due between the claim and this read counts (read with the
   * time of this query, it was missed until the next write: a retry 10 ms away waited 2 s).
   * Infinity when none.
   */
  private async nextDue(kinds: readonly TaskKind[], since: number): Promise<number> {
    const row = await this.db
      .selectFrom('tasks')
      .select(sql<number | null>`min(case when state = 'queued' then run_after else lease_until end)`.as('due'))
      .where('kind', 'in', kinds)
      .where((eb) =>
        eb.or([eb.and([eb('state', '=', 'queued'), eb('run_after', '>', since)]), eb('state', '=', 'running')]),
      )
      .executeTakeFirst();
    return row?.due ?? Number.POSITIVE_INFINITY;
  }

  /** Every write that can make a task claimable goes through here. */
  private changed<T>(result: Promise<T>): Promise<T> {
    return result.finally(() => this.writes.n++);
  }

  override enqueue(t: Parameters<SqlTaskQueue['enqueue']>[0]): Promise<void> {
    return this.changed(super.enqueue(t));
  }

  /** The batch in a few statements (../sql/task-enqueue.ts); no signal to send: claimers poll. */
  async enqueueMany(tasks: readonly EnqueueTask[]): Promise<void> {
    await this.changed(enqueueMany(this.db, this.now, tasks, insertValues));
  }

  override complete(taskId: string, workerId: string): Promise<void> {
    return this.changed(super.complete(taskId, workerId));
  }

  override fail(taskId: string, workerId: string, o: Parameters<SqlTaskQueue['fail']>[2]): Promise<void> {
    return this.changed(super.fail(taskId, workerId, o));
  }

  override release(taskId: string, workerId: string, opts?: Parameters<SqlTaskQueue['release']>[2]): Promise<void> {
    return this.changed(super.release(taskId, workerId, opts));
  }

  override jobEnded(jobId: string): Promise<void> {
    return this.changed(super.jobEnded(jobId));
  }

  override cancelJob(jobId: string): Promise<number> {
    return this.changed(super.cancelJob(jobId));
  }

  override setJobPriority(jobId: string, priority: number): Promise<number> {
    return this.changed(super.setJobPriority(jobId, priority));
  }

  override resumeJob(jobId: string): Promise<number> {
    return this.changed(super.resumeJob(jobId));
  }

  /** Deleting a failed dependency frees the tasks that waited on it. */
  override pruneFinished(before: Date, limit: number): Promise<number> {
    return this.changed(super.pruneFinished(before, limit));
  }
}
