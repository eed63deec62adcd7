// The SessionStore on SQLite and PostgreSQL: what sign-in, the auth hook and sign-out rely on.
// A session joins its key (revoking the key shows at once), only the id's hash is stored, and
// ended sessions are swept by their absolute or idle expiry.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../../service/adapters/postgres/db.js';
import { PgKeyStore } from '../../../service/adapters/postgres/key-store.js';
import { openSqlite } from '../../../service/adapters/sqlite/db.js';
import { SqliteKeyStore } from '../../../service/adapters/sqlite/key-store.js';
import { SqlSessionStore } from '../../../service/adapters/sql/session-store.js';
import { createApiKey } from '../../../service/domain/api-keys.js';
import { hashSessionId, newSessionId } from '../../../service/domain/sessions.js';
import type { KeyStore } from '../../../service/ports/keys.js';
import type { SessionStore } from '../../../service/ports/sessions.js';
import { createTestDatabase, requirePostgres } from '../../helpers/postgres.js';
import { withHarness } from './with-harness.js';

interface Harness {
  sessions: SessionStore;
  keys: KeyStore;
  close(): Promise<void>;
}

function sessionStoreConformance(name: string, open: () => Promise<Harness>): void {
  describe(`SessionStore conformance: ${name}`, () => {
    const withStore = withHarness(open);

    it(
      'finds a session by its id hash with its workspace and key state, and deletes it once',
      withStore(async ({ sessions, keys }) => {
        const { record } = await createApiKey(keys, { workspace: 'studio', label: 'laptop' });
        const id = newSessionId();
        const now = Date.now();
        await sessions.create({
          idHash: hashSessionId(id),
          keyId: record.id,
          workspaceId: record.workspaceId,
          userId: record.userId,
          createdAt: now,
          lastSeenAt: now,
          expiresAt: now + 60_000,
        });
        const found = await sessions.find(hashSessionId(id));
        expect(found).toMatchObject({
          keyId: record.id,
          workspaceId: record.workspaceId,
          workspaceName: 'studio',
          createdAt: now,
          lastSeenAt: now,
          expiresAt: now + 60_000,
          keyRevoked: false,
        });
        expect(found!.idHash.equals(hashSessionId(id))).toBe(true);
        // The id itself finds nothing: only its hash is a key of the table.
        expect(await sessions.find(Buffer.from(id))).toBeUndefined();
        await sessions.touch(hashSessionId(id), now + 5000);
        await sessions.touch(hashSessionId(id), now + 1000);
        expect((await sessions.find(hashSessionId(id)))?.lastSeenAt).toBe(now + 5000);
        expect(await sessions.delete(hashSessionId(id))).toBe(true);
        expect(await sessions.delete(hashSessionId(id))).toBe(false);
        expect(await sessions.find(hashSessionId(id))).toBeUndefined();
      }),
    );

    it(
      'shows a revoked key on the very next lookup',
      withStore(async ({ sessions, keys }) => {
        const { record } = await createApiKey(keys, { workspace: 'studio', label: 'to revoke' });
        const idHash = hashSessionId(newSessionId());
        const now = Date.now();
        await sessions.create({
          idHash,
          keyId: record.id,
          workspaceId: record.workspaceId,
          userId: record.userId,
          createdAt: now,
          lastSeenAt: now,
          expiresAt: now + 60_000,
        });
        await keys.revokeKey(record.id);
        expect((await sessions.find(idHash))?.keyRevoked).toBe(true);
      }),
    );

    it(
      'sweeps sessions past their absolute expiry or idle too long, and keeps live ones',
      withStore(async ({ sessions, keys }) => {
        const { record } = await createApiKey(keys, { workspace: 'studio', label: 'sweep' });
        const now = Date.now();
        const add = async (lastSeenAt: number, expiresAt: number) => {
          const idHash = hashSessionId(newSessionId());
          await sessions.create({
            idHash,
            keyId: record.id,
            workspaceId: record.workspaceId,
            userId: record.userId,
            createdAt: now - 100_000,
            lastSeenAt,
            expiresAt,
          });
          return idHash;
        };
        const live = await add(now - 1000, now + 60_000);
        const expired = await add(now - 1000, now - 1);
        const idle = await add(now - 50_000, now + 60_000);
        expect(await sessions.deleteEnded(now, now - 30_000, 100)).toBe(2);
        expect(await sessions.find(live)).toBeDefined();
        expect(await sessions.find(expired)).toBeUndefined();
        expect(await sessions.find(idle)).toBeUndefined();
        expect(await sessions.deleteEnded(now, now - 30_000, 100)).toBe(0);
      }),
    );
  });
}

sessionStoreConformance('SQLite', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'rb-sessions-'));
  const db = await openSqlite(path.join(dir, 'db.sqlite'));
  return {
    sessions: new SqlSessionStore(db.db),
    keys: new SqliteKeyStore(db),
    close: async () => {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

const pgReady = await requirePostgres('the PostgreSQL session store tests');
describe.skipIf(!pgReady)('on PostgreSQL', () => {
  sessionStoreConformance('PostgreSQL', async () => {
    const database = await createTestDatabase();
    const pg = await openPostgres(database.url);
    return {
      sessions: new SqlSessionStore(pg.db),
      keys: new PgKeyStore(pg.db),
      close: async () => {
        await pg.close();
        await database.drop();
      },
    };
  });
});
