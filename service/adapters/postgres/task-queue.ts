import type { Kysely } from 'kysely';
import { ReadySignal } from '../ready-signal.js';
import type { DB } from '../sql/schema.js';
import type { ClaimPick } from '../sql/task-claim.js';
import { SqlTaskQueue, type FinishSet } from '../sql/task-queue.js';
import { finishPg } from './task-finish.js';
import { PgSignalBus } from './signals.js';

/**
 * Durable task queue in PostgreSQL, for deployments without Redis: several service instances and
 * workers share it. Queries are shared with SQLite (../sql/task-queue.ts). The database is owned
 * and closed by whoever opened it; `now` (default Date.now) times leases.
 */
export class PgTaskQueue extends SqlTaskQueue {
  /**
   * FOR UPDATE SKIP LOCKED: rows another claimer holds are skipped rather than waited for, so
   * concurrent claims neither block each other nor take the same task.
   */
  protected override lockPick(pick: ClaimPick): ClaimPick {
    return pick.forUpdate().skipLocked();
  }

  /** One statement where the shared path takes two (task-finish.ts). */
  protected override finish(taskId: string, workerId: string, set: FinishSet): Promise<void> {
    return finishPg(this.db, taskId, workerId, set, this.now());
  }
}

/**
 * The queue with ready signals (NOTIFY / LISTEN on `url`), as every process of a PostgreSQL farm
 * runs it: idle workers elsewhere claim a new task at once instead of at their next poll.
 * `onError` gets the signal connection's failures (the queue keeps working by polling).
 */
export function signalledPgTaskQueue(db: Kysely<DB>, url: string, onError?: (err: Error) => void): PgTaskQueue {
  const bus = new PgSignalBus(db, url, onError ? { onError } : {});
  return new PgTaskQueue(db, Date.now, new ReadySignal(bus, onError));
}
