// The analysis cache store on SQLite and PostgreSQL: what the validate handler relies on to skip
// Blender. An analysis comes back exactly under its workspace and key, never under another
// workspace's (the same key there is a miss), a second put replaces the first, and another
// connection (another process: the service and its workers) sees it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../../service/adapters/postgres/db.js';
import { SqlAnalysisCache } from '../../../service/adapters/sql/analysis-cache.js';
import { openSqlite } from '../../../service/adapters/sqlite/db.js';
import type { AnalysisCacheEntry, AnalysisCacheStore } from '../../../service/ports/analysis-cache.js';
import { createTestDatabase, requirePostgres } from '../../helpers/postgres.js';
import { withHarness } from './with-harness.js';

interface Harness {
  store: AnalysisCacheStore;
  /** A second connection to the same database. */
  other: AnalysisCacheStore;
  close(): Promise<void>;
}

const KEY = 'a'.repeat(64);

function entry(over: Partial<AnalysisCacheEntry> = {}): AnalysisCacheEntry {
  return {
    workspaceId: 'ws-studio',
    key: KEY,
    // Big and full of what JSON holds: quotes, newlines, non-ASCII names, the folder placeholders.
    analysis: JSON.stringify({
      output: { fileName: 'szene "Nacht" ü.blend', lines: Array.from({ length: 2000 }, (_, i) => `line ${i}\n`) },
      warnings: [],
      root: '@@renderbridge-project-root@@/textures/a.png',
    }),
    createdAt: '2030-01-01T00:00:00.000Z',
    ...over,
  };
}

function analysisCacheConformance(name: string, open: () => Promise<Harness>): void {
  describe(`AnalysisCache conformance: ${name}`, () => {
    const withStore = withHarness(open);

    it(
      'gives back the stored analysis exactly, to another connection too; an unknown key is a miss',
      withStore(async ({ store, other }) => {
        expect(await store.get('ws-studio', KEY)).toBeNull();
        const e = entry();
        await store.put(e);
        expect(await store.get('ws-studio', KEY)).toBe(e.analysis);
        expect(await other.get('ws-studio', KEY)).toBe(e.analysis);
        expect(await other.get('ws-studio', 'b'.repeat(64))).toBeNull();
      }),
    );

    it(
      "never answers with another workspace's analysis, even under the same key",
      withStore(async ({ store, other }) => {
        await store.put(entry());
        expect(await store.get('ws-other', KEY)).toBeNull();
        expect(await other.get('ws-other', KEY)).toBeNull();
        await store.put(entry({ workspaceId: 'ws-other', analysis: '{"theirs":true}' }));
        expect(await store.get('ws-other', KEY)).toBe('{"theirs":true}');
        expect(await store.get('ws-studio', KEY)).toBe(entry().analysis);
      }),
    );

    it(
      'a second put of the same key replaces the first (two validations of one project at once)',
      withStore(async ({ store, other }) => {
        await Promise.all([store.put(entry()), other.put(entry({ analysis: '{"second":true}' }))]);
        const got = await store.get('ws-studio', KEY);
        expect([entry().analysis, '{"second":true}']).toContain(got);
        await store.put(entry({ analysis: '{"third":true}', createdAt: '2030-01-02T00:00:00.000Z' }));
        expect(await other.get('ws-studio', KEY)).toBe('{"third":true}');
      }),
    );
  });
}

analysisCacheConformance('SQLite', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'rb-analysis-cache-'));
  const file = path.join(dir, 'db.sqlite');
  const db = await openSqlite(file);
  const second = await openSqlite(file);
  return {
    store: new SqlAnalysisCache(db.db),
    other: new SqlAnalysisCache(second.db),
    close: async () => {
      await second.close();
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

const pgReady = await requirePostgres('the PostgreSQL analysis cache tests');
describe.skipIf(!pgReady)('on PostgreSQL', () => {
  analysisCacheConformance('PostgreSQL', async () => {
    const database = await createTestDatabase();
    const pg = await openPostgres(database.url);
    const second = await openPostgres(database.url);
    return {
      store: new SqlAnalysisCache(pg.db),
      other: new SqlAnalysisCache(second.db),
      close: async () => {
        await second.close();
        await pg.close();
        await database.drop();
      },
    };
  });
});
