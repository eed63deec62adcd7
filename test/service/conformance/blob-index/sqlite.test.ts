// The SQLite blob store against the BlobStore conformance suite, on a fresh database file per test.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openSqlite, type SqliteHandle } from '../../../../service/adapters/sqlite/db.js';
import { SqliteBlobStore } from '../../../../service/adapters/sqlite/blob-store.js';
import { SqliteJobStore } from '../../../../service/adapters/sqlite/job-store.js';
import { blobUrlSecret } from '../../../../service/adapters/sql/blob-secret.js';
import { blobStoreConformance } from './suite.js';

blobStoreConformance('SQLite', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'rb-blobs-'));
  const file = path.join(dir, 'db.sqlite');
  const handles: SqliteHandle[] = [await openSqlite(file)];
  const h = handles[0]!;
  return {
    blobs: new SqliteBlobStore(h),
    jobs: new SqliteJobStore(h),
    secret: await blobUrlSecret(h.db),
    other: async () => {
      const o = await openSqlite(file);
      handles.push(o);
      return { blobs: new SqliteBlobStore(o), secret: await blobUrlSecret(o.db) };
    },
    close: async () => {
      for (const x of handles) await x.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
