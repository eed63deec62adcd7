// The PostgreSQL adapters against the shared port conformance suites, plus what matters when
// several service instances and workers share one database.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openPostgres, type PostgresHandle } from '../../../service/adapters/postgres/db.js';
import { PgJobStore } from '../../../service/adapters/postgres/job-store.js';
import { PgKeyStore } from '../../../service/adapters/postgres/key-store.js';
import { PgLeaseStore } from '../../../service/adapters/postgres/lease-store.js';
import { PgTaskQueue, signalledPgTaskQueue } from '../../../service/adapters/postgres/task-queue.js';
import { pgMigrations } from '../../../service/adapters/postgres/migrations.js';
import { createTestDatabase, requirePostgres } from '../../helpers/postgres.js';
import { jobStoreConformance } from './job-store.js';
import { addJob } from './job-store/helpers.js';
import { keyStoreConformance } from './key-store.js';
import { handClock, leaseStoreConformance } from './lease-store.js';
import { taskQueueConformance } from './task-queue.js';

/** A fresh database with `count` independent handles on it (service instances), all closed and dropped by close(). */
async function instances(count: number) {
  const database = await createTestDatabase();
  const handles: PostgresHandle[] = [];
  for (let i = 0; i < count; i++) handles.push(await openPostgres(database.url, { maxConnections: 5 }));
  return {
    url: database.url,
    handles,
    /** Another handle, closed with the rest. */
    open: async () => {
      const h = await openPostgres(database.url, { maxConnections: 5 });
      handles.push(h);
      return h;
    },
    close: async () => {
      for (const h of handles.splice(0)) await h.close();
      await database.drop();
    },
  };
}

/** A port that nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

it('says what to check when the server is unreachable, without the password', async () => {
  const url = `postgres://renderbridge:hunter2-secret@127.0.0.1:${await closedPort()}/state`;
  const err = (await openPostgres(url, { connectTimeoutMs: 2000 }).catch((e: unknown) => e)) as Error;
  expect(err.message).toContain('cannot connect to PostgreSQL at postgres://renderbridge:***@127.0.0.1:');
  expect(err.message).toContain('ECONNREFUSED');
  expect(err.message).toContain('check that the PostgreSQL server is running');
  expect(err.message).not.toContain('hunter2-secret');
  await expect(openPostgres('mysql://root@localhost/x')).rejects.toThrow('must start with postgres://');
});

const pgUp = await requirePostgres('the PostgreSQL adapter conformance tests');

describe.skipIf(!pgUp)('PostgreSQL', () => {
  taskQueueConformance('PostgreSQL', async () => {
    const db = await instances(1);
    // As the service opens it: with ready signals (NOTIFY/LISTEN), each handle its own listener.
    const queues = [signalledPgTaskQueue(db.handles[0]!.db, db.url)];
    const more = async () => {
      queues.push(signalledPgTaskQueue((await db.open()).db, db.url));
      return queues.at(-1)!;
    };
    return {
      queue: queues[0]!,
      reopen: async () => {
        await queues.shift()!.close();
        await db.handles.shift()!.close();
        return more();
      },
      other: more,
      close: async () => {
        for (const q of queues.splice(0)) await q.close();
        await db.close();
      },
    };
  });

  jobStoreConformance('PostgreSQL', async () => {
    const db = await instances(1);
    return {
      store: new PgJobStore(db.handles[0]!.db),
      reopen: async () => {
        await db.handles.pop()!.close();
        return new PgJobStore((await db.open()).db);
      },
      other: async () => new PgJobStore((await db.open()).db),
      close: db.close,
    };
  });

  keyStoreConformance('PostgreSQL', async () => {
    const db = await instances(1);
    return {
      store: new PgKeyStore(db.handles[0]!.db),
      other: async () => new PgKeyStore((await db.open()).db),
      close: db.close,
    };
  });

  leaseStoreConformance('PostgreSQL', async () => {
    const db = await instances(2);
    const clock = handClock();
    const [a, b] = [0, 1].map((i) => new PgLeaseStore(db.handles[i]!.db, clock.now));
    return { a: a!, b: b!, advance: clock.advance, close: db.close };
  });

  describe('several instances on one database', () => {
    it('migrates once when two instances start at the same moment', async () => {
      const database = await createTestDatabase({ empty: true });
      try {
        const [a, b] = await Promise.all([openPostgres(database.url), openPostgres(database.url)]);
        const applied = await sql<{ name: string }>`select name from kysely_migration`.execute(a.db);
        // Every migration once, not once per instance.
        expect(applied.rows.map((r) => r.name)).toEqual(Object.keys(pgMigrations));
        // Both handles work on the one schema.
        const ws = randomUUID();
        const rec = await addJob(new PgJobStore(a.db), ws);
        expect((await new PgJobStore(b.db).get(ws, rec.job.id))?.job.id).toBe(rec.job.id);
        await Promise.all([a.close(), b.close()]);
      } finally {
        await database.drop();
      }
    });

    it('hands each task to exactly one of 2 x 4 concurrent claimers', async () => {
      const db = await instances(2);
      try {
        const [qa, qb] = db.handles.map((h) => new PgTaskQueue(h.db));
        const ids = Array.from({ length: 200 }, (_, i) => `t${i}`);
        for (const id of ids) await qa!.enqueue({ id, jobId: 'j', kind: 'render-chunk' });
        const claimer = async (queue: PgTaskQueue, worker: string) => {
          const got: string[] = [];
          for (
            let t = await queue.claim(worker, ['render-chunk'], 60_000);
            t;
            t = await queue.claim(worker, ['render-chunk'], 60_000)
          ) {
            got.push(t.id);
            await queue.complete(t.id, worker);
          }
          return got;
        };
        const runs = [qa, qa, qa, qa, qb, qb, qb, qb].map((q, i) => claimer(q!, `w${i}`));
        const claimed = (await Promise.all(runs)).flat();
        expect(claimed.length).toBe(ids.length);
        expect([...new Set(claimed)].sort()).toEqual([...ids].sort());
        expect(await qb!.counts()).toEqual({ queued: 0, running: 0, done: 200, failed: 0 });
      } finally {
        await db.close();
      }
    });

    it('lets exactly one of two instances win a racing transition, and loses no concurrent update', async () => {
      const db = await instances(2);
      try {
        const [a, b] = db.handles.map((h) => new PgJobStore(h.db));
        const ws = randomUUID();
        for (let round = 0; round < 10; round++) {
          const rec = await addJob(a!, ws);
          const results = await Promise.all(
            [a!, b!, a!, b!].map((s) => s.transition(rec.job.id, ['created'], 'validating')),
          );
          expect(results.filter(Boolean)).toHaveLength(1);
        }
        expect((await b!.list(ws, { page: 1, pageSize: 1, status: 'validating' })).total).toBe(10);
        expect((await b!.list(ws, { page: 1, pageSize: 1, status: 'created' })).total).toBe(0);

        // An update racing a transition on another instance: both changes land, every time.
        for (let round = 0; round < 10; round++) {
          const rec = await addJob(a!, ws);
          await Promise.all([
            a!.update(rec.job.id, { normalizedSeconds: round }),
            b!.transition(rec.job.id, ['created'], 'validating'),
          ]);
          expect((await b!.get(ws, rec.job.id))?.job).toMatchObject({ status: 'validating', normalizedSeconds: round });
        }
        expect((await a!.list(ws, { page: 1, pageSize: 100, status: 'validating' })).total).toBe(20);
      } finally {
        await db.close();
      }
    });

    it('names the database to create when it does not exist, without the password', async () => {
      const database = await createTestDatabase();
      const missing = new URL(database.url);
      missing.pathname = `/${database.name}_missing`;
      missing.password = 'hunter2-secret';
      await database.drop();
      const err = (await openPostgres(missing.toString()).catch((e: unknown) => e)) as Error;
      expect(err.message).toContain('does not exist');
      expect(err.message).toContain('create the database');
      expect(err.message).not.toContain('hunter2-secret');
    });
  });
});
