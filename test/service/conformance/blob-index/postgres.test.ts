// The PostgreSQL blob store against the BlobStore conformance suite, on a fresh database per test.
import { describe } from 'vitest';
import { openPostgres, type PostgresHandle } from '../../../../service/adapters/postgres/db.js';
import { PgBlobStore } from '../../../../service/adapters/postgres/blob-store.js';
import { PgJobStore } from '../../../../service/adapters/postgres/job-store.js';
import { blobUrlSecret } from '../../../../service/adapters/sql/blob-secret.js';
import { createTestDatabase, requirePostgres } from '../../../helpers/postgres.js';
import { blobStoreConformance } from './suite.js';

const pgUp = await requirePostgres('The PostgreSQL blob store tests');

describe.skipIf(!pgUp)('PostgreSQL', () => {
  blobStoreConformance('PostgreSQL', async () => {
    const database = await createTestDatabase();
    const handles: PostgresHandle[] = [await openPostgres(database.url, { maxConnections: 5 })];
    const h = handles[0]!;
    return {
      blobs: new PgBlobStore(h.db),
      jobs: new PgJobStore(h.db),
      secret: await blobUrlSecret(h.db),
      other: async () => {
        const o = await openPostgres(database.url, { maxConnections: 5 });
        handles.push(o);
        return { blobs: new PgBlobStore(o.db), secret: await blobUrlSecret(o.db) };
      },
      close: async () => {
        for (const x of handles) await x.close();
        await database.drop();
      },
    };
  });
});
