// The embedded adapters (SQLite, local files) against the shared port conformance suites.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openSqlite, type SqliteHandle } from '../../service/adapters/sqlite/db.js';
import { SqliteJobStore } from '../../service/adapters/sqlite/job-store.js';
import { SqliteKeyStore } from '../../service/adapters/sqlite/key-store.js';
import { SqliteTaskQueue } from '../../service/adapters/sqlite/task-queue.js';
import { startTestService } from '../helpers/service.js';
import { jobStoreConformance } from './job-store.js';
import { keyStoreConformance } from './key-store.js';
import { objectStorageConformance } from './object-storage.js';
import { taskQueueConformance } from './task-queue.js';

async function sqliteHarness<T>(make: (db: SqliteHandle) => T) {
  const dir = await mkdtemp(path.join(tmpdir(), 'rb-conf-'));
  const file = path.join(dir, 'db.sqlite');
  let db = await openSqlite(file);
  return {
    file,
    value: make(db),
    reopen: async () => {
      await db.close();
      db = await openSqlite(file);
      return make(db);
    },
    close: async () => {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

taskQueueConformance('SQLite', async () => {
  const h = await sqliteHarness((db) => new SqliteTaskQueue(db.db));
  return { queue: h.value, reopen: h.reopen, close: h.close };
});

jobStoreConformance('SQLite', async () => {
  const h = await sqliteHarness((db) => new SqliteJobStore(db));
  return { store: h.value, reopen: h.reopen, close: h.close };
});

keyStoreConformance('SQLite', async () => {
  const h = await sqliteHarness((db) => new SqliteKeyStore(db));
  const others: SqliteHandle[] = [];
  return {
    store: h.value,
    other: async () => {
      const db = await openSqlite(h.file);
      others.push(db);
      return new SqliteKeyStore(db);
    },
    close: async () => {
      for (const db of others) await db.close();
      await h.close();
    },
  };
});

objectStorageConformance('filesystem (served by the reference service)', async () => {
  const svc = await startTestService();
  return { storage: svc.service.ports.storage, close: () => svc.close() };
});
