// The WebhookStore adapters (SQLite, PostgreSQL) against the shared conformance suite.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe } from 'vitest';
import { openPostgres, type PostgresHandle } from '../../../service/adapters/postgres/db.js';
import { PgWebhookStore } from '../../../service/adapters/postgres/webhook-store.js';
import { openSqlite, type SqliteHandle } from '../../../service/adapters/sqlite/db.js';
import { openWebhookStore } from '../../../service/adapters/sqlite/webhook-store.js';
import { createTestDatabase, requirePostgres } from '../../helpers/postgres.js';
import { webhookStoreConformance } from './webhook-store.js';

webhookStoreConformance('SQLite', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'rb-webhooks-'));
  const file = path.join(dir, 'db.sqlite');
  const handles: SqliteHandle[] = [await openSqlite(file)];
  return {
    store: openWebhookStore(handles[0]!),
    other: async () => {
      const h = await openSqlite(file);
      handles.push(h);
      return openWebhookStore(h);
    },
    close: async () => {
      for (const h of handles) await h.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

const pgUp = await requirePostgres('the PostgreSQL webhook store tests');

describe.skipIf(!pgUp)('PostgreSQL', () => {
  webhookStoreConformance('PostgreSQL', async () => {
    const database = await createTestDatabase();
    const handles: PostgresHandle[] = [await openPostgres(database.url, { maxConnections: 4 })];
    return {
      store: new PgWebhookStore(handles[0]!.db),
      other: async () => {
        const h = await openPostgres(database.url, { maxConnections: 4 });
        handles.push(h);
        return new PgWebhookStore(h.db);
      },
      close: async () => {
        for (const h of handles) await h.close();
        await database.drop();
      },
    };
  });
});
