// 011_dashboard: The dashboard: sessions (an API key exchanged for a cookie; only the id's SHA-256 stored),
// and per task when its latest attempt started and who ran it, kept once the task ends.
import { type Kysely, type Migration } from 'kysely';

export const m011Dashboard: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('sessions')
      .addColumn('id_hash', 'blob', (c) => c.primaryKey())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'integer', (c) => c.notNull())
      .addColumn('last_seen_at', 'integer', (c) => c.notNull())
      .addColumn('expires_at', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();
    await db.schema.createIndex('sessions_last_seen').on('sessions').column('last_seen_at').execute();
    await db.schema.alterTable('tasks').addColumn('started_at', 'text').execute();
    await db.schema.alterTable('tasks').addColumn('ran_by', 'text').execute();
  },
};
