// The per-frame statistics store on SQLite and PostgreSQL: what GET /jobs/{id}/frames and the
// progress ETA rely on. One row per job, frame and attempt (a repeated report replaces it), read
// back exactly, paged in frame order, and visible to another connection (another process).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../../service/adapters/postgres/db.js';
import { openSqlite } from '../../../service/adapters/sqlite/db.js';
import { SqlFrameStats } from '../../../service/adapters/sql/frame-stats.js';
import type { FrameStat, FrameStatsStore } from '../../../service/ports/frame-stats.js';
import { createTestDatabase, requirePostgres } from '../../helpers/postgres.js';
import { withHarness } from './with-harness.js';

interface Harness {
  store: FrameStatsStore;
  /** A second connection to the same database. */
  other: FrameStatsStore;
  close(): Promise<void>;
}

const JOB = '0b7a4c8e-8a51-4b43-9d2e-3f0f0e0c0a01';

function stat(frame: number, over: Partial<FrameStat> = {}): FrameStat {
  return {
    jobId: JOB,
    frame,
    attempt: 1,
    renderSeconds: 1.5 + frame / 10,
    peakMemoryBytes: 12_000_000_000 + frame,
    device: 'OPTIX',
    slot: 'render-1/gpu-GPU-1',
    blenderVersion: '4.2.3',
    finishedAt: `2026-01-01T00:00:${String(frame % 60).padStart(2, '0')}.000Z`,
    ...over,
  };
}

function frameStatsConformance(name: string, open: () => Promise<Harness>): void {
  describe(`FrameStats conformance: ${name}`, () => {
    const withStore = withHarness(open);

    it(
      'keeps every field of each frame, bytes over 4 GiB and null memory included, for other connections',
      withStore(async ({ store, other }) => {
        expect(await other.listFrames(JOB, { offset: 0, limit: 10 })).toEqual({ frames: [], total: 0 });
        const rows: [FrameStat, FrameStat] = [
          stat(2),
          stat(1, { peakMemoryBytes: null, device: 'CPU', blenderVersion: null }),
        ];
        await store.recordFrames(rows);
        expect(await other.listFrames(JOB, { offset: 0, limit: 10 })).toEqual({ frames: [rows[1], rows[0]], total: 2 });
        expect(await other.frameTimes(JOB)).toEqual(
          [rows[1], rows[0]].map((r) => ({
            frame: r.frame,
            renderSeconds: r.renderSeconds,
            peakMemoryBytes: r.peakMemoryBytes,
            slot: r.slot,
            finishedAt: r.finishedAt,
          })),
        );
      }),
    );

    it(
      'holds one row per frame and attempt: a repeated report replaces it, a retry adds its own',
      withStore(async ({ store }) => {
        await store.recordFrames([stat(5)]);
        await store.recordFrames([stat(5, { renderSeconds: 9 })]);
        await store.recordFrames([stat(5, { attempt: 2, renderSeconds: 3 })]);
        const { frames, total } = await store.listFrames(JOB, { offset: 0, limit: 10 });
        expect(total).toBe(2);
        expect(frames.map((f) => [f.frame, f.attempt, f.renderSeconds])).toEqual([
          [5, 1, 9],
          [5, 2, 3],
        ]);
      }),
    );

    it(
      'pages in frame order and keeps jobs apart',
      withStore(async ({ store }) => {
        await store.recordFrames(Array.from({ length: 25 }, (_, i) => stat(25 - i)));
        await store.recordFrames([stat(1, { jobId: '0b7a4c8e-8a51-4b43-9d2e-3f0f0e0c0a02' })]);
        const page = await store.listFrames(JOB, { offset: 10, limit: 10 });
        expect(page.total).toBe(25);
        expect(page.frames.map((f) => f.frame)).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
        expect((await store.listFrames(JOB, { offset: 20, limit: 10 })).frames.map((f) => f.frame)).toEqual([
          21, 22, 23, 24, 25,
        ]);
        expect(await store.frameTimes('0b7a4c8e-8a51-4b43-9d2e-3f0f0e0c0a03')).toEqual([]);
        // The latest to finish (frame 25 finished at :25 ... frame 21 at :21), still by frame.
        expect((await store.frameTimes(JOB, { latest: 3 })).map((f) => f.frame)).toEqual([23, 24, 25]);
      }),
    );
  });
}

frameStatsConformance('SQLite', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'rb-frames-'));
  const file = path.join(dir, 'db.sqlite');
  const db = await openSqlite(file);
  const second = await openSqlite(file);
  return {
    store: new SqlFrameStats(db.db),
    other: new SqlFrameStats(second.db),
    close: async () => {
      await second.close();
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

const pgReady = await requirePostgres('the PostgreSQL frame statistics tests');
describe.skipIf(!pgReady)('on PostgreSQL', () => {
  frameStatsConformance('PostgreSQL', async () => {
    const database = await createTestDatabase();
    const pg = await openPostgres(database.url);
    const second = await openPostgres(database.url);
    return {
      store: new SqlFrameStats(pg.db),
      other: new SqlFrameStats(second.db),
      close: async () => {
        await second.close();
        await pg.close();
        await database.drop();
      },
    };
  });
});
