// The worker token store on SQLite and PostgreSQL: what the worker API's authentication and
// `renderbridge admin *-worker-token` rely on. Only hashes are stored; a token is found by its
// hash and revoked by id or name; another connection (another service instance, the admin CLI)
// sees a revoke at once, since nothing is cached; one active token per worker name.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../../service/adapters/postgres/db.js';
import { openSqlite } from '../../../service/adapters/sqlite/db.js';
import { SqlWorkerTokenStore } from '../../../service/adapters/sql/worker-token-store.js';
import { createWorkerToken, hashWorkerToken } from '../../../service/domain/worker-tokens.js';
import type { WorkerTokenStore } from '../../../service/ports/worker-tokens.js';
import { createTestDatabase, requirePostgres } from '../../helpers/postgres.js';
import { withHarness } from './with-harness.js';

interface Harness {
  store: WorkerTokenStore;
  /** A second connection to the same database, as another process would open. */
  other: WorkerTokenStore;
  close(): Promise<void>;
}

function workerTokenStoreConformance(name: string, open: () => Promise<Harness>): void {
  describe(`WorkerTokenStore conformance: ${name}`, () => {
    const withStore = withHarness(open);

    it(
      'finds a token by its hash only and lists it without the token or its hash',
      withStore(async ({ store, other }) => {
        const { token, record } = await createWorkerToken(store, 'render-1');
        expect(token).toMatch(/^rbw_[A-Za-z0-9_-]{43}$/);
        expect(await other.findWorkerToken(hashWorkerToken(token))).toEqual({
          ...record,
          lastUsedAt: null,
          revokedAt: null,
        });
        expect(await store.findWorkerToken(hashWorkerToken(`${token}x`))).toBeUndefined();
        const listed = await other.listWorkerTokens();
        expect(listed).toEqual([record]);
        expect(JSON.stringify(listed)).not.toContain(token.slice(8));
        expect(record.displayPrefix).toBe(token.slice(0, 8));
      }),
    );

    it(
      'revokes by id or by name, once, and another connection sees it at the next lookup',
      withStore(async ({ store, other }) => {
        const a = await createWorkerToken(store, 'gpu-a');
        const b = await createWorkerToken(store, 'gpu-b');
        // Warm both handles, then revoke through the other connection.
        expect((await store.findWorkerToken(hashWorkerToken(a.token)))?.revokedAt).toBeNull();
        expect((await other.revokeWorkerToken(a.record.id))?.name).toBe('gpu-a');
        expect(typeof (await store.findWorkerToken(hashWorkerToken(a.token)))?.revokedAt).toBe('string');
        expect(await other.revokeWorkerToken(a.record.id)).toBeUndefined();
        expect((await store.revokeWorkerToken('gpu-b'))?.id).toBe(b.record.id);
        expect(typeof (await other.findWorkerToken(hashWorkerToken(b.token)))?.revokedAt).toBe('string');
        expect(await store.revokeWorkerToken('no-such-worker')).toBeUndefined();
      }),
    );

    it(
      'keeps one active token per worker name; a revoked name can be given a new token',
      withStore(async ({ store, other }) => {
        const first = await createWorkerToken(store, 'render-2');
        await expect(createWorkerToken(other, 'render-2')).rejects.toThrow(
          /an active worker token named "render-2" exists: revoke it first/,
        );
        await store.revokeWorkerToken('render-2');
        const second = await createWorkerToken(other, 'render-2');
        expect(second.record.id).not.toBe(first.record.id);
        const active = Object.fromEntries((await store.listWorkerTokens()).map((t) => [t.id, t.revokedAt === null]));
        expect(active).toEqual({ [first.record.id]: false, [second.record.id]: true });
      }),
    );

    it(
      'records the last use',
      withStore(async ({ store, other }) => {
        const { token, record } = await createWorkerToken(store, 'render-3');
        await store.markWorkerTokenUsed(record.id, '2026-01-02T03:04:05.000Z');
        expect((await other.findWorkerToken(hashWorkerToken(token)))?.lastUsedAt).toBe('2026-01-02T03:04:05.000Z');
      }),
    );

    it(
      'refuses a name that could not start a lease id',
      withStore(async ({ store }) => {
        await expect(createWorkerToken(store, 'host:1')).rejects.toThrow(/not a worker name/);
        await expect(createWorkerToken(store, '')).rejects.toThrow(/not a worker name/);
        expect(await store.listWorkerTokens()).toEqual([]);
      }),
    );
  });
}

workerTokenStoreConformance('SQLite', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'rb-worker-tokens-'));
  const file = path.join(dir, 'db.sqlite');
  const db = await openSqlite(file);
  const second = await openSqlite(file);
  return {
    store: new SqlWorkerTokenStore(db.db),
    other: new SqlWorkerTokenStore(second.db),
    close: async () => {
      await second.close();
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

const pgReady = await requirePostgres('the PostgreSQL worker token store tests');
describe.skipIf(!pgReady)('on PostgreSQL', () => {
  workerTokenStoreConformance('PostgreSQL', async () => {
    const database = await createTestDatabase();
    const pg = await openPostgres(database.url);
    const second = await openPostgres(database.url);
    return {
      store: new SqlWorkerTokenStore(pg.db),
      other: new SqlWorkerTokenStore(second.db),
      close: async () => {
        await second.close();
        await pg.close();
        await database.drop();
      },
    };
  });
});
