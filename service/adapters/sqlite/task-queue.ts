import { sql } from 'kysely';
import type { Task, TaskKind } from '../../ports/tasks.js';
import { SqlTaskQueue } from '../sql/task-queue.js';
import { CommitWatch } from './commit-watch.js';
import type { SqliteHandle } from './db.js';

/** What an empty claim found: nothing changes that until a write or `dueAt`. */
interface EmptyClaim {
  generation: number;
  version: number;
  /** When a task of these kinds becomes claimable by time alone (a retry delay, a lease running out). */
  dueAt: number;
}

/**
 * Durable task queue in the service's SQLite database (queries shared with PostgreSQL in
 * ../sql/task-queue.ts). The claim is one UPDATE: a statement that writes takes SQLite's write
 * lock before it reads, so the pick and the lease are atomic across connections and processes
 * sharing the file, and a claimer that finds the lock taken waits (busy timeout) instead of
 * failing with "database is locked" (see ./write-lock.ts). The database is owned and closed by
 * whoever opened it.
 *
 * SQLite has no way to tell other processes of new tasks, so idle lanes poll, several times a
 * second each, while a render goes on beside them. An empty claim is remembered with what could
 * change its answer: a write of this queue, a commit of another connection (data_version), or the
 * moment the next task becomes due by time alone; until one of them happens, a claim answers
 * nothing without building or running the UPDATE.
 */
export class SqliteTaskQueue extends SqlTaskQueue {
  /** Bumped after each write of this queue that can make a task claimable. */
  private generation = 0;
  private readonly empty = new Map<string, EmptyClaim>();
  private readonly commits: CommitWatch;

  constructor(sqlite: Pick<SqliteHandle, 'db' | 'raw'>) {
    super(sqlite.db);
    // Read afresh on every claim (2 us): the shared watch may be a millisecond stale, and a
    // claim must see another process's task as soon as it is committed.
    this.commits = new CommitWatch(sqlite.raw, 0);
  }

  override async claim(workerId: string, kinds: readonly TaskKind[], leaseMs: number): Promise<Task | undefined> {
    const key = kinds.join(',');
    const seen = this.empty.get(key);
    const generation = this.generation;
    const version = this.commits.version();
    if (seen && seen.generation === generation && seen.version === version && this.now() < seen.dueAt) return undefined;
    const task = await super.claim(workerId, kinds, leaseMs);
    if (task || kinds.length === 0) {
      this.empty.delete(key);
      return task;
    }
    // Read after the claim, remembered with the generation and version from before it: a write
    // in between makes the memo stale at once, never wrongly fresh.
    this.empty.set(key, { generation, version, dueAt: await this.nextDue(kinds) });
    return undefined;
  }

  /** The earliest retry delay or lease end among tasks of `kinds`; Infinity when none. */
  private async nextDue(kinds: readonly TaskKind[]): Promise<number> {
    const now = this.now();
    const row = await this.db
      .selectFrom('tasks')
      .select(sql<number | null>`min(case when state = 'queued' then run_after else lease_until end)`.as('due'))
      .where('kind', 'in', kinds)
      .where((eb) => eb.or([eb.and([eb('state', '=', 'queued'), eb('run_after', '>', now)]), eb('state', '=', 'running')]))
      .executeTakeFirst();
    return row?.due ?? Number.POSITIVE_INFINITY;
  }

  private changed<T>(result: Promise<T>): Promise<T> {
    return result.finally(() => this.generation++);
  }

  override enqueue(t: Parameters<SqlTaskQueue['enqueue']>[0]): Promise<void> {
    return this.changed(super.enqueue(t));
  }

  override complete(taskId: string, workerId: string): Promise<void> {
    return this.changed(super.complete(taskId, workerId));
  }

  override fail(taskId: string, workerId: string, o: Parameters<SqlTaskQueue['fail']>[2]): Promise<void> {
    return this.changed(super.fail(taskId, workerId, o));
  }

  override release(taskId: string, workerId: string, opts?: { delayMs?: number }): Promise<void> {
    return this.changed(super.release(taskId, workerId, opts));
  }

  override cancelJob(jobId: string): Promise<number> {
    return this.changed(super.cancelJob(jobId));
  }

  /** Deleting a failed dependency frees the tasks that waited on it. */
  override pruneFinished(before: Date, limit: number): Promise<number> {
    return this.changed(super.pruneFinished(before, limit));
  }
}
