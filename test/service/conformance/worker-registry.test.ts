// The WorkerRegistry on SQLite and PostgreSQL: what worker heartbeats, GET /workers, /readyz and
// the retention sweep rely on. A report replaces the worker's previous one and is stamped with
// the registry's clock; another connection (another process) sees it at once; workers are listed
// by most recent heartbeat, and pruned by it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../../service/adapters/postgres/db.js';
import { openSqlite } from '../../../service/adapters/sqlite/db.js';
import { SqlWorkerRegistry } from '../../../service/adapters/sql/worker-registry.js';
import type { WorkerRegistry, WorkerReport } from '../../../service/ports/workers.js';
import { createTestDatabase, requirePostgres } from '../../helpers/postgres.js';
import { withHarness } from './with-harness.js';

interface Harness {
  /** Stamps heartbeats with `clock.now`. */
  registry: WorkerRegistry;
  /** A second connection to the same database, as another process would open. */
  other: WorkerRegistry;
  clock: { now: number };
  close(): Promise<void>;
}

function report(id: string, over: Partial<WorkerReport> = {}): WorkerReport {
  return {
    id,
    name: id.split(':')[0]!,
    hostname: 'render-1',
    version: '1.2.3',
    startedAt: '2026-01-01T00:00:00.000Z',
    state: 'running',
    heartbeatIntervalMs: 5000,
    slots: [
      {
        id: 'control',
        device: { kind: 'control', name: 'CPU', uuid: null },
        state: 'idle',
        tasks: [],
        warmJobId: null,
      },
      {
        id: 'gpu-GPU-1',
        device: { kind: 'gpu', name: 'NVIDIA RTX 4090', uuid: 'GPU-1' },
        state: 'busy',
        tasks: [
          {
            jobId: 'job-1',
            taskId: 'chunk:job-1:0',
            kind: 'render-chunk',
            frames: [1, 2],
            startedAt: '2026-01-01T00:00:05.000Z',
          },
        ],
        warmJobId: 'job-1',
      },
    ],
    builds: [{ version: '4.2.0', path: '/opt/blender/blender' }],
    gpus: [{ name: 'NVIDIA RTX 4090', uuid: 'GPU-1', memoryMiB: 24564 }],
    blocklistedBy: [{ jobId: 'job-2', slots: ['render-1/gpu-GPU-1'], failures: 3 }],
    ...over,
  };
}

function workerRegistryConformance(name: string, open: () => Promise<Harness>): void {
  describe(`WorkerRegistry conformance: ${name}`, () => {
    const withRegistry = withHarness(open);

    it(
      "keeps each worker's latest report, stamped with the registry's clock, and shows it to other connections",
      withRegistry(async ({ registry, other, clock }) => {
        expect(await registry.listWorkers()).toEqual([]);
        clock.now = 1_000_000;
        await registry.report(report('a:1'));
        expect(await other.listWorkers()).toEqual([{ ...report('a:1'), heartbeatAt: 1_000_000 }]);
        clock.now = 1_005_000;
        const idle = report('a:1', { slots: [], blocklistedBy: [] });
        await registry.report(idle);
        expect(await other.listWorkers()).toEqual([{ ...idle, heartbeatAt: 1_005_000 }]);
        clock.now = 1_006_000;
        await registry.report(report('a:1', { state: 'stopped' }));
        expect((await registry.listWorkers()).map((w) => [w.id, w.state, w.heartbeatAt])).toEqual([
          ['a:1', 'stopped', 1_006_000],
        ]);
      }),
    );

    it(
      'lists workers by most recent heartbeat and prunes those silent since before a time',
      withRegistry(async ({ registry, clock }) => {
        clock.now = 2_000_000;
        await registry.report(report('old:1'));
        clock.now = 3_000_000;
        await registry.report(report('new:2'));
        clock.now = 2_500_000;
        await registry.report(report('mid:3'));
        expect((await registry.listWorkers()).map((w) => w.id)).toEqual(['new:2', 'mid:3', 'old:1']);
        expect(await registry.pruneWorkers(new Date(2_000_000))).toBe(0);
        expect(await registry.pruneWorkers(new Date(2_600_000))).toBe(2);
        expect((await registry.listWorkers()).map((w) => w.id)).toEqual(['new:2']);
        // A pruned worker that reports again is back.
        await registry.report(report('old:1'));
        expect((await registry.listWorkers()).map((w) => w.id).sort()).toEqual(['new:2', 'old:1']);
      }),
    );
  });
}

workerRegistryConformance('SQLite', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'rb-workers-'));
  const file = path.join(dir, 'db.sqlite');
  const db = await openSqlite(file);
  const second = await openSqlite(file);
  const clock = { now: 0 };
  return {
    registry: new SqlWorkerRegistry(db.db, () => clock.now),
    other: new SqlWorkerRegistry(second.db),
    clock,
    close: async () => {
      await second.close();
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

const pgReady = await requirePostgres('the PostgreSQL worker registry tests');
describe.skipIf(!pgReady)('on PostgreSQL', () => {
  workerRegistryConformance('PostgreSQL', async () => {
    const database = await createTestDatabase();
    const pg = await openPostgres(database.url);
    const second = await openPostgres(database.url);
    const clock = { now: 0 };
    return {
      registry: new SqlWorkerRegistry(pg.db, () => clock.now),
      other: new SqlWorkerRegistry(second.db),
      clock,
      close: async () => {
        await second.close();
        await pg.close();
        await database.drop();
      },
    };
  });
});
