// The preemption decision of warm slots (service/worker/render/warm-preemption.ts) against a real
// SQLite queue and job store: off at gap 0, on when a waiting task's priority is the gap or more
// above the running job's, never for an equal or smaller priority, the job's own tasks, or a job
// requiring tags this worker lacks; one queue read per interval for all the slots of a process, and
// one slot handed back per waiting task, whichever process the slots are in.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqlite, type SqliteHandle } from '../../../service/adapters/sqlite/db.js';
import { SqliteJobStore } from '../../../service/adapters/sqlite/job-store.js';
import { SqliteTaskQueue } from '../../../service/adapters/sqlite/task-queue.js';
import { initialScheduling } from '../../../service/domain/scheduling.js';
import type { JobRecord } from '../../../service/ports/jobs.js';
import { pino } from 'pino';
import { outputLayout } from '../../../service/worker/outputs/chunk-files.js';
import { DeferTaskError } from '../../../service/worker/runtime/outcomes.js';
import type { TaskContext } from '../../../service/worker/runtime/runtime.js';
import { outranks, PreemptionWatch, tagsFit } from '../../../service/worker/render/warm-preemption.js';
import { addJob } from '../conformance/job-store/helpers.js';

describe('outranks and tagsFit', () => {
  it('preempts only with a gap set, for a priority at least the gap above', () => {
    const waiting = { priority: 80, jobId: 'h' };
    expect(outranks(0, 20, waiting)).toBe(false);
    expect(outranks(30, 50, waiting)).toBe(true);
    expect(outranks(31, 50, waiting)).toBe(false);
    expect(outranks(1, 80, waiting)).toBe(false);
    expect(outranks(10, 20, undefined)).toBe(false);
    expect(tagsFit(undefined, new Set())).toBe(true);
    expect(tagsFit(['gpu:a4000'], new Set(['gpu:a4000', 'site:paris']))).toBe(true);
    expect(tagsFit(['gpu:a4000', 'site:oslo'], new Set(['gpu:a4000']))).toBe(false);
  });
});

describe('PreemptionWatch', () => {
  let dir: string;
  let db: SqliteHandle;
  let queue: SqliteTaskQueue;
  let jobs: SqliteJobStore;
  let clock: number;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rb-preempt-'));
    db = await openSqlite(path.join(dir, 'db.sqlite'));
    queue = new SqliteTaskQueue(db);
    jobs = new SqliteJobStore(db);
    clock = 1_000;
  });
  afterEach(async () => {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A job at `priority` (requiring `tags`) with one waiting render chunk. */
  async function waitingJob(priority: number, tags: string[] = []): Promise<JobRecord> {
    const rec = await addJob(jobs, 'ws');
    const scheduling = initialScheduling({ priority, requiredTags: tags }, []);
    await jobs.update(rec.job.id, { scheduling });
    const id = `chunk:${rec.job.id}:0`;
    await queue.enqueue({ id, jobId: rec.job.id, kind: 'render-chunk', payload: { frames: [1] }, priority });
    return { ...rec, job: { ...rec.job, scheduling } };
  }

  const watch = (gap: number, tags: string[] = []) =>
    new PreemptionWatch({ gap, queue, jobs, tags, readEveryMs: 250, now: () => clock });

  it('names the waiting job that outranks the running one by the gap', async () => {
    const low = await waitingJob(20);
    const high = await waitingJob(80);
    expect(await watch(0).outranking(low.job)).toBeUndefined();
    expect(await watch(60).outranking(low.job)).toEqual({ priority: 80, jobId: high.job.id });
    expect(await watch(61).outranking(low.job)).toBeUndefined();
    // The running job is the one on top: its own tasks never preempt it.
    expect(await watch(1).outranking(high.job)).toBeUndefined();
    // A job without a priority runs at the default, 50.
    expect(await watch(30).outranking({ id: 'x' })).toEqual({ priority: 80, jobId: high.job.id });
  });

  it('never preempts for an equal priority', async () => {
    const a = await waitingJob(50);
    await waitingJob(50);
    expect(await watch(1).outranking(a.job)).toBeUndefined();
  });

  it('leaves a waiting job alone when this worker lacks a tag it requires', async () => {
    const low = await waitingJob(10);
    const high = await waitingJob(90, ['gpu:a4000']);
    expect(await watch(20, ['site:paris']).outranking(low.job)).toBeUndefined();
    expect(await watch(20, ['gpu:a4000']).outranking(low.job)).toEqual({ priority: 90, jobId: high.job.id });
  });

  it('hands back one slot per waiting task, with the reason, the next read deciding again', async () => {
    const low = await waitingJob(10);
    const high = await waitingJob(90);
    const w = watch(20);
    const notes: string[] = [];
    const ctx = (lane: string) => ({
      job: low,
      lane: { name: lane },
      log: pino({ level: 'silent' }),
      taskLog: { note: (n: string) => notes.push(n) },
    });
    const slot = (lane: string, todo: number[], i: number) =>
      w.beforeFrame(ctx(lane) as unknown as TaskContext, outputLayout(path.join(dir, 'job')), todo, i);
    const first = await slot('cpu-0', [4, 5, 6], 1).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(DeferTaskError);
    expect((first as DeferTaskError).delayMs).toBe(0);
    expect((first as DeferTaskError).message).toBe('paused for a priority-90 job after frame 4');
    expect(notes).toEqual([
      `paused for a priority-90 job after frame 4: 2 frame(s) handed back to the queue (job ${high.job.id})`,
    ]);
    // Another slot renders on: the one waiting task can take one slot, in this read and the next.
    await expect(slot('cpu-1', [7, 8], 0)).resolves.toBeUndefined();
    clock += 250;
    await expect(slot('cpu-1', [7, 8], 0)).resolves.toBeUndefined();
    // A second waiting task of the high job frees a second slot.
    await queue.enqueue({ id: `chunk:${high.job.id}:1`, jobId: high.job.id, kind: 'render-chunk', priority: 90 });
    clock += 250;
    await expect(slot('cpu-1', [7, 8], 0)).rejects.toThrow('paused for a priority-90 job before frame 7');
  });

  it('takes a place per slot across processes sharing the queue, each place for its time', async () => {
    const low = await waitingJob(10);
    const high = await waitingJob(90);
    const ctx = { job: low, lane: { name: 'cpu-0' }, log: pino({ level: 'silent' }) };
    const inProcess = (holder: string, placeMs: number) =>
      new PreemptionWatch({ gap: 20, queue, jobs, holder, readEveryMs: 0, placeMs }).beforeFrame(
        ctx as unknown as TaskContext,
        outputLayout(path.join(dir, holder)),
        [1, 2],
        1,
      );
    await expect(inProcess('machine-a', 60_000)).rejects.toThrow(DeferTaskError);
    await expect(inProcess('machine-b', 60_000)).resolves.toBeUndefined();
    // The same slot asking again holds its place still (its hand-back was not claimed yet).
    await expect(inProcess('machine-a', 60_000)).rejects.toThrow(DeferTaskError);
    // Claimed, the high job's task waits no more: nothing hands back for it.
    expect((await queue.claim('machine-a:cpu-0', ['render-chunk'], 60_000))?.jobId).toBe(high.job.id);
    await expect(inProcess('machine-c', 60_000)).resolves.toBeUndefined();
  });

  it('reads the queue once per interval for every slot, then sees it anew', async () => {
    const low = await waitingJob(10);
    const w = watch(20);
    expect(await w.outranking(low.job)).toBeUndefined();
    const high = await waitingJob(90);
    // Within the interval: the read before answers (a few reads a second at most).
    clock += 249;
    expect(await w.outranking(low.job)).toBeUndefined();
    clock += 1;
    expect(await w.outranking(low.job)).toEqual({ priority: 90, jobId: high.job.id });
  });

  it('says once when the queue stops answering and once when it is back, preempting nothing meanwhile', async () => {
    const low = await waitingJob(10);
    const high = await waitingJob(90);
    let down = true;
    const flaky = {
      topWaiting: (kinds: Parameters<typeof queue.topWaiting>[0]) =>
        down ? Promise.reject(new Error('401 WORKER_TOKEN_REVOKED')) : queue.topWaiting(kinds),
      takeHandBackPlace: queue.takeHandBackPlace.bind(queue),
    };
    const said: string[] = [];
    const log = pino(
      { level: 'info' },
      {
        write: (line: string) => {
          const { level, msg } = JSON.parse(line) as { level: number; msg: string };
          said.push(`${level === 40 ? 'warn' : 'info'} ${msg}`);
        },
      },
    );
    const w = new PreemptionWatch({ gap: 20, queue: flaky, jobs, readEveryMs: 250, now: () => clock, log });
    for (let i = 0; i < 3; i++, clock += 250) expect(await w.outranking(low.job)).toBeUndefined();
    down = false;
    expect(await w.outranking(low.job)).toEqual({ priority: 90, jobId: high.job.id });
    expect(said).toEqual([
      'warn preemption paused: reading the waiting priority failed; frames go on until the queue answers',
      'info preemption works again: the queue answers',
    ]);
  });
});
