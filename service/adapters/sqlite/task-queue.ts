import { SqlTaskQueue } from '../sql/task-queue.js';
import type { SqliteHandle } from './db.js';

/**
 * Durable task queue in the service's SQLite database (queries shared with PostgreSQL in
 * ../sql/task-queue.ts). The claim is one UPDATE: a statement that writes takes SQLite's write
 * lock before it reads, so the pick and the lease are atomic across connections and processes
 * sharing the file, and a claimer that finds the lock taken waits (busy timeout) instead of
 * failing with "database is locked" (see ./write-lock.ts). The database is owned and closed by
 * whoever opened it.
 */
export class SqliteTaskQueue extends SqlTaskQueue {
  constructor(sqlite: Pick<SqliteHandle, 'db'>) {
    super(sqlite.db);
  }
}
