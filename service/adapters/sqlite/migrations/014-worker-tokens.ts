// 014_worker_tokens: Per-worker credentials of the worker API: only each token's SHA-256 is stored. At most one
// active token per worker name (the name is the worker's identity in leases and heartbeats).
import { sql, type Kysely, type Migration } from 'kysely';

export const m014WorkerTokens: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('worker_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'blob', (c) => c.notNull().unique())
      .addColumn('display_prefix', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text')
      .addColumn('revoked_at', 'text')
      .execute();
    await sql`create unique index worker_tokens_active_name on worker_tokens (name) where revoked_at is null`.execute(
      db,
    );
  },
};
