// How the SQLite adapters write safely when several connections share one database file (the
// service and a `renderbridge worker` beside it on one data folder).
//
// SQLite's plain BEGIN is deferred: the first read takes a snapshot, and the first write then has
// to upgrade it. If another connection committed in between, the snapshot is stale and SQLite
// answers SQLITE_BUSY ("database is locked") at once: the busy timeout cannot help, since
// waiting would not make the snapshot current. So every read-then-write is either
//  - one statement that writes (UPDATE ... WHERE id = (SELECT ...) RETURNING): a writing
//    statement takes the write lock before it reads, and waits for it (busy timeout); or
//  - a better-sqlite3 transaction run with `.immediate`, which takes the write lock first.
// Such a transaction runs synchronously: the busy timeout waits by blocking the thread, so a
// lock held across an `await` would stall a second connection of the same process until it
// gave up. A transaction that starts with a write (INSERT first) has nothing to upgrade.
import type { Kysely } from 'kysely';
import type { DB } from '../sql/schema.js';

/**
 * Runs `fn`, synchronous work on the raw better-sqlite3 connection (e.g. a `transaction(...)`
 * function called with `.immediate`), while holding Kysely's connection: better-sqlite3 would
 * otherwise nest it, as a savepoint, in a Kysely transaction that happens to be open on the same
 * connection, and that transaction's rollback would undo it.
 */
export function exclusive<T>(db: Kysely<DB>, fn: () => T): Promise<T> {
  return db.connection().execute(async () => fn());
}
