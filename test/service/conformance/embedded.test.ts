// The embedded adapters (SQLite, local files) against the shared port conformance suites, and
// SQLite shared by two processes (a service and a `renderbridge worker` on one data folder).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openSqlite, type SqliteHandle } from '../../../service/adapters/sqlite/db.js';
import { SqliteJobStore } from '../../../service/adapters/sqlite/job-store.js';
import { SqliteKeyStore } from '../../../service/adapters/sqlite/key-store.js';
import { SqliteLeaseStore } from '../../../service/adapters/sqlite/lease-store.js';
import { SqliteTaskQueue } from '../../../service/adapters/sqlite/task-queue.js';
import { openWebhookStore } from '../../../service/adapters/sqlite/webhook-store.js';
import { startTestService } from '../../helpers/service.js';
import { jobStoreConformance } from './job-store.js';
import { addJob } from './job-store/helpers.js';
import { keyStoreConformance } from './key-store.js';
import { handClock, leaseStoreConformance } from './lease-store.js';
import { objectStorageConformance } from './object-storage.js';
import { taskQueueConformance } from './task-queue.js';

/** One SQLite file: the adapter on it, reopened, and `other()` adapters on independent handles (other processes). */
async function sqliteHarness<T>(make: (db: SqliteHandle) => T) {
  const dir = await mkdtemp(path.join(tmpdir(), 'rb-conf-'));
  const file = path.join(dir, 'db.sqlite');
  let db = await openSqlite(file);
  const others: SqliteHandle[] = [];
  return {
    file,
    value: make(db),
    reopen: async () => {
      await db.close();
      db = await openSqlite(file);
      return make(db);
    },
    other: async () => {
      const handle = await openSqlite(file);
      others.push(handle);
      return make(handle);
    },
    close: async () => {
      for (const o of others) await o.close();
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

taskQueueConformance('SQLite', async () => {
  const h = await sqliteHarness((db) => new SqliteTaskQueue(db));
  return { queue: h.value, reopen: h.reopen, other: h.other, close: h.close };
});

jobStoreConformance('SQLite', async () => {
  const h = await sqliteHarness((db) => new SqliteJobStore(db));
  return { store: h.value, reopen: h.reopen, other: h.other, close: h.close };
});

keyStoreConformance('SQLite', async () => {
  const h = await sqliteHarness((db) => new SqliteKeyStore(db));
  return { store: h.value, other: h.other, close: h.close };
});

objectStorageConformance('filesystem (served by the reference service)', async () => {
  const svc = await startTestService();
  return { storage: svc.service.ports.storage, close: () => svc.close() };
});

leaseStoreConformance('SQLite', async () => {
  const clock = handClock();
  const h = await sqliteHarness((db) => new SqliteLeaseStore(db.db, clock.now));
  return { a: h.value, b: await h.other(), advance: clock.advance, close: h.close };
});

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * One process of the pair (ESM, the adapters loaded through tsx): opens the file when told, then,
 * given job ids, claims tasks (4 claimers) and deliveries (2) until none is left while moving
 * each job created -> validating, and prints what it got as one JSON line.
 */
const PROCESS_SCRIPT = `
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
const [root, file] = process.argv.slice(1);
const load = (p) => import(pathToFileURL(path.join(root, p)).href);
const { openSqlite } = await load('service/adapters/sqlite/db.ts');
const { SqliteJobStore } = await load('service/adapters/sqlite/job-store.ts');
const { SqliteTaskQueue } = await load('service/adapters/sqlite/task-queue.ts');
const { openWebhookStore } = await load('service/adapters/sqlite/webhook-store.ts');
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const next = async () => (await lines.next()).value;
console.log('loaded');
await next();
const h = await openSqlite(file);
console.log('opened');
const jobIds = JSON.parse(await next());
const [queue, hooks, jobs] = [new SqliteTaskQueue(h), openWebhookStore(h), new SqliteJobStore(h)];
const tasks = async (w) => { const ids = []; for (let t; (t = await queue.claim(w, ['render-chunk'], 60000)); ) \
ids.push(t.id); return ids; };
const deliveries = async () => { const ids = []; for (let b; (b = await hooks.claimDue(Date.now(), 3, 60000)).length; \
) ids.push(...b.map((d) => d.id)); return ids; };
const move = async () => { const ids = []; for (const id of jobIds) if (await jobs.transition(id, ['created'], \
'validating')) ids.push(id); return ids; };
const got = await Promise.all([tasks('a'), tasks('b'), tasks('c'), tasks('d'), deliveries(), deliveries(), move()]);
console.log(JSON.stringify({ tasks: got.slice(0, 4).flat(), deliveries: got.slice(4, 6).flat(), moved: got[6] }));
await h.close();
`;

interface Report {
  tasks: string[];
  deliveries: string[];
  moved: string[];
}

/** Starts one process of the pair on `file`; it talks in lines over stdin and stdout. */
function startProcess(file: string) {
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PROCESS_SCRIPT, ROOT, file], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = once(proc, 'exit').then(([code]) => code as number | null);
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  return {
    send: (line: string) => proc.stdin.write(`${line}\n`),
    end: () => proc.stdin.end(),
    next: async (): Promise<string> => {
      const r = await lines.next();
      if (r.done)
        throw new Error(`the SQLite test process exited early (code ${String(await exited)}): see its stderr above`);
      return r.value;
    },
    exited,
    kill: () => proc.kill(),
  };
}

describe('SQLite shared by two processes', () => {
  it('opens a new file from both at once, then claims each task and delivery once, moves each job once', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'rb-procs-'));
    const file = path.join(dir, 'db.sqlite');
    const procs = [startProcess(file), startProcess(file)];
    try {
      for (const p of procs) expect(await p.next()).toBe('loaded');
      // Both create the schema at the same moment: a service and a worker started together.
      for (const p of procs) p.send('open');
      for (const p of procs) expect(await p.next()).toBe('opened');

      const h = await openSqlite(file);
      try {
        const queue = new SqliteTaskQueue(h);
        const hooks = openWebhookStore(h);
        const jobs = new SqliteJobStore(h);
        const taskIds = Array.from({ length: 200 }, (_, i) => `chunk:${i}`);
        for (const id of taskIds) await queue.enqueue({ id, jobId: 'j', kind: 'render-chunk' });
        const eventIds = Array.from({ length: 60 }, () => `evt_${randomUUID()}`);
        for (const id of eventIds) {
          await hooks.enqueue(
            {
              id,
              event: 'onRenderComplete',
              jobId: 'j',
              workspaceId: 'ws',
              status: 'completed',
              occurredAt: new Date().toISOString(),
            },
            Date.now() - 1000,
          );
        }
        const ws = randomUUID();
        const jobIds: string[] = [];
        for (let i = 0; i < 20; i++) jobIds.push((await addJob(jobs, ws)).job.id);

        for (const p of procs) p.send(JSON.stringify(jobIds));
        for (const p of procs) p.end();
        const reports = await Promise.all(procs.map(async (p) => JSON.parse(await p.next()) as Report));
        expect(await Promise.all(procs.map((p) => p.exited))).toEqual([0, 0]);

        const all = (key: keyof Report) => reports.flatMap((r) => r[key]).sort();
        expect(all('tasks')).toEqual([...taskIds].sort());
        expect(all('deliveries')).toEqual([...eventIds].sort());
        expect(all('moved')).toEqual([...jobIds].sort());
        // Each lease counted once, and the per-status counts stayed in step with the moves.
        expect((await queue.jobTasks('j')).filter((t) => t.attempts === 1)).toHaveLength(taskIds.length);
        expect((await hooks.getDelivery(eventIds[0]!))?.attempts).toBe(1);
        expect((await jobs.list(ws, { page: 1, pageSize: 1, status: 'validating' })).total).toBe(20);
        expect((await jobs.list(ws, { page: 1, pageSize: 1, status: 'created' })).total).toBe(0);
      } finally {
        await h.close();
      }
    } finally {
      for (const p of procs) p.kill();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
