// The SQLite queue remembers an empty claim (idle lanes poll it several times a second beside a
// render) and must still see every task the moment it becomes claimable: enqueued or freed by
// another queue object on the same connection (the service's API beside its in-process workers),
// by another connection (a worker process), or by time alone (a release delay).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqlite, type SqliteHandle } from '../../../service/adapters/sqlite/db.js';
import { SqliteTaskQueue } from '../../../service/adapters/sqlite/task-queue.js';

let dir: string;
let handles: SqliteHandle[];
const open = async () => {
  const h = await openSqlite(path.join(dir, 'db.sqlite'));
  handles.push(h);
  return h;
};

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rb-claim-memo-'));
  handles = [];
});
afterEach(async () => {
  for (const h of handles) await h.close();
  await rm(dir, { recursive: true, force: true });
});

/** Claims until a task comes or `ms` pass; how long it took. */
async function claimWithin(q: SqliteTaskQueue, worker: string, ms: number) {
  const t0 = Date.now();
  for (;;) {
    const task = await q.claim(worker, ['render-chunk'], 30_000);
    if (task || Date.now() - t0 > ms) return { task, ms: Date.now() - t0 };
    await new Promise((r) => setImmediate(r));
  }
}

describe('SQLite empty-claim memo', () => {
  it('a task enqueued by another queue object on the same connection is claimed at once', async () => {
    const h = await open();
    const [lane, api] = [new SqliteTaskQueue(h), new SqliteTaskQueue(h)];
    expect(await lane.claim('w1', ['render-chunk'], 30_000)).toBeUndefined();
    await api.enqueue({ id: 't1', jobId: 'j', kind: 'render-chunk' });
    // No retry, no wait: the very next claim finds it.
    expect((await lane.claim('w1', ['render-chunk'], 30_000))?.id).toBe('t1');
  });

  it('a task another connection commits is claimed at once (data_version)', async () => {
    const [lane, worker] = [new SqliteTaskQueue(await open()), new SqliteTaskQueue(await open())];
    expect(await lane.claim('w1', ['render-chunk'], 30_000)).toBeUndefined();
    await worker.enqueue({ id: 't2', jobId: 'j', kind: 'render-chunk' });
    expect((await lane.claim('w1', ['render-chunk'], 30_000))?.id).toBe('t2');
  });

  it('a task released with a delay by another queue object is claimed once the delay is over, not before', async () => {
    const h = await open();
    const [small, big] = [new SqliteTaskQueue(h), new SqliteTaskQueue(h)];
    await small.enqueue({ id: 't3', jobId: 'j', kind: 'render-chunk' });
    expect((await small.claim('small', ['render-chunk'], 30_000))?.id).toBe('t3');
    // The other lane looks while the task is leased: nothing, remembered until the lease ends.
    expect(await big.claim('big', ['render-chunk'], 30_000)).toBeUndefined();
    const releasedAt = Date.now();
    await small.release('t3', 'small', { delayMs: 300 });
    expect(await big.claim('big', ['render-chunk'], 30_000)).toBeUndefined();
    const got = await claimWithin(big, 'big', 10_000);
    expect(got.task?.id).toBe('t3');
    // The run_after the release wrote, in the same clock: never handed out early.
    expect(Date.now()).toBeGreaterThanOrEqual(releasedAt + 300);
  });

  it("a retry that falls due while a claim runs is claimed on the next poll, not after the memo's limit", async () => {
    // The queue's clock, scripted: each claim reads it before its query, the claim query reads it
    // again (and, before the fix, so did the read of the next due time, after the query).
    let t = 1_000;
    const script: number[] = [];
    const q = new SqliteTaskQueue(await open(), () => script.shift() ?? t);
    await q.enqueue({ id: 'r', jobId: 'j', kind: 'render-chunk' });
    expect((await q.claim('w', ['render-chunk'], 30_000))?.id).toBe('r');
    await q.fail('r', 'w', { retryable: true, message: 'crash', retryAfterMs: 10 }); // due at 1010
    // Not due when the claim looks (1005, 1009); due by the time anything after it reads the clock (1013).
    script.push(1_005, 1_009, 1_013);
    expect(await q.claim('w', ['render-chunk'], 30_000)).toBeUndefined();
    t = 1_017;
    expect((await q.claim('w', ['render-chunk'], 30_000))?.id).toBe('r');
  });

  it('a task freed by its dependency finishing is claimed at once', async () => {
    const h = await open();
    const q = new SqliteTaskQueue(h);
    const other = new SqliteTaskQueue(h);
    await q.enqueue({ id: 'render', jobId: 'j', kind: 'render-chunk' });
    await q.enqueue({ id: 'final', jobId: 'j', kind: 'finalize', after: ['render'] });
    expect((await q.claim('w', ['render-chunk'], 30_000))?.id).toBe('render');
    expect(await other.claim('c', ['finalize'], 30_000)).toBeUndefined();
    await q.complete('render', 'w');
    expect((await other.claim('c', ['finalize'], 30_000))?.id).toBe('final');
  });

  it('an empty claim it remembers does not wait for the write lock another process holds', async () => {
    const lane = new SqliteTaskQueue(await open());
    const busy = await open();
    expect(await lane.claim('w', ['render-chunk'], 30_000)).toBeUndefined();
    // Another process is inside a long write; its commit is not visible yet, so nothing changed.
    busy.raw.exec('BEGIN IMMEDIATE');
    try {
      // Without the memo the claim's UPDATE waits for the lock (the 5 s busy timeout, blocking the
      // thread) and then fails with "database is locked".
      await expect(lane.claim('w', ['render-chunk'], 30_000)).resolves.toBeUndefined();
    } finally {
      busy.raw.exec('ROLLBACK');
    }
  });
});
