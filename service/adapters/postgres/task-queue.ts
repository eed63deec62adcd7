import { SqlTaskQueue, type ClaimPick } from '../sql/task-queue.js';

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
}
