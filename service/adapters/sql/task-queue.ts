import type { Kysely } from 'kysely';
import type { Task, TaskInfo, TaskKind, TaskQueue, TaskRun } from '../../ports/tasks.js';
import type { GroupQueueLoad, QueueAheadCounts } from '../../ports/queue-order.js';
import type { DB } from './schema.js';
import type { ReadySignal } from '../ready-signal.js';
import { TaskClaim, type ClaimPick } from './task-claim.js';
import { chargeTime, guessedGroups, settleGroup, tagTask } from './share-tags.js';
import { setWeight, weights } from './share-weights.js';
import { counts, countsByKind, jobTaskRuns, jobTasks } from './task-reads.js';
import { groupLoads, queueAhead } from './queue-order.js';
import { topWaiting } from './waiting-priority.js';
import { takeHandBackPlace } from './hand-back-places.js';
import type { WaitingTop } from '../../ports/waiting-priority.js';
import { jobSched, newTaskRow, pauseJob, requeuedState, resumeJob, setJobPriority } from './task-schedule.js';
import { releaseTask, wakeWaiters } from './task-waits.js';
import { pruneFinished } from './task-prune.js';
import type { DependencyWakes } from '../../ports/dependency-waits.js';

/** How a task's row ends an attempt (SqlTaskQueue.finish). */
export interface FinishSet {
  state: string | ReturnType<typeof requeuedState>;
  last_error: string | null;
  run_after?: number;
}

/**
 * The durable task queue's queries shared by the SQLite and PostgreSQL adapters. A claim is a
 * lease: a worker that dies stops extending it, and the task becomes claimable again when the
 * lease runs out. The claim (./task-claim.ts) must hand a task to one worker only; each engine
 * says how through `lockPick`.
 */
export abstract class SqlTaskQueue implements TaskQueue, DependencyWakes {
  /** Present when other processes can be told of ready tasks (PostgreSQL NOTIFY); SQLite polls. */
  readonly onReady?: (listener: (kind: TaskKind) => void) => () => void;

  private readonly claimer: TaskClaim;

  constructor(
    protected readonly db: Kysely<DB>,
    protected readonly now: () => number = Date.now,
    private readonly signal?: ReadySignal,
  ) {
    if (signal) this.onReady = (listener) => signal.onReady(listener);
    // Through a closure: the engine's override of the hook is the one the claim must use.
    this.claimer = new TaskClaim(db, now, (pick) => this.lockPick(pick));
  }

  claim(workerId: string, kinds: readonly TaskKind[], leaseMs: number): Promise<Task | undefined> {
    return this.claimer.claim(workerId, kinds, leaseMs);
  }

  /** How the engine keeps two claimers off one row (SQLite: its write lock, nothing to add). */
  protected lockPick(pick: ClaimPick): ClaimPick {
    return pick;
  }

  async enqueue(t: {
    id: string;
    jobId: string;
    kind: TaskKind;
    payload?: Record<string, unknown>;
    after?: readonly string[];
    priority?: number;
    shareGroup?: string;
  }): Promise<void> {
    const ts = new Date(this.now()).toISOString();
    const claimable = await this.db.transaction().execute(async (trx) => {
      // Checked first so that a repeated enqueue does not advance the group's fair-share tag.
      if (await trx.selectFrom('tasks').select('id').where('id', '=', t.id).executeTakeFirst()) return false;
      const job = await jobSched(trx, t);
      const row = newTaskRow(t, job);
      const tag = await tagTask(trx, { kind: t.kind, shareGroup: job.shareGroup, frames: row.units });
      const added = await trx
        .insertInto('tasks')
        .values({
          ...row,
          tag,
          attempts: 0,
          run_after: this.now(),
          worker_id: null,
          lease_until: null,
          last_error: null,
          created_at: ts,
          updated_at: ts,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      if (Number(added.numInsertedOrUpdatedRows ?? 0n) === 0) return false;
      if (!t.after?.length) return !job.paused;
      await trx
        .insertInto('task_deps')
        .values(t.after.map((dep) => ({ task_id: t.id, dep_id: dep })))
        .onConflict((oc) => oc.doNothing())
        .execute();
      return false;
    });
    // Only once committed: a signal sent from inside the transaction travels on another
    // connection and could wake a claimer before the task is visible, which then found nothing
    // and slept until its next poll.
    if (claimable) this.signal?.notify(t.kind);
  }

  async extendLease(taskId: string, workerId: string, leaseMs: number): Promise<boolean> {
    const r = await this.db
      .updateTable('tasks')
      .set({ lease_until: this.now() + leaseMs })
      .where('id', '=', taskId)
      .where('worker_id', '=', workerId)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  async complete(taskId: string, workerId: string): Promise<void> {
    // No signal for the tasks this frees (a job's finalize): the completing worker's own idle
    // lanes claim them at once (the runtime wakes them after every task), without a query here.
    await this.finish(taskId, workerId, { state: 'done', last_error: null });
  }

  setJobPriority(jobId: string, priority: number): Promise<number> {
    return setJobPriority(this.db, jobId, priority);
  }

  pauseJob(jobId: string): Promise<number> {
    return pauseJob(this.db, jobId);
  }

  async resumeJob(jobId: string): Promise<number> {
    const { n, kinds } = await resumeJob(this.db, jobId);
    for (const kind of kinds) this.signal?.notify(kind);
    return n;
  }

  setShareWeight(group: string, weight: number): Promise<void> {
    return setWeight(this.db, group, weight);
  }

  shareWeights(): Promise<Record<string, number>> {
    return weights(this.db);
  }

  queueAhead(jobId: string): Promise<QueueAheadCounts | null> {
    return queueAhead(this.db, jobId);
  }

  groupLoads(): Promise<GroupQueueLoad[]> {
    return groupLoads(this.db);
  }

  topWaiting(kinds: readonly TaskKind[]): Promise<WaitingTop | undefined> {
    return topWaiting(this.db, kinds, this.now());
  }

  takeHandBackPlace(jobId: string, kinds: readonly TaskKind[], holder: string, ttlMs: number): Promise<boolean> {
    return takeHandBackPlace(this.db, this.now(), { jobId, kinds, holder, ttlMs });
  }

  async fail(
    taskId: string,
    workerId: string,
    o: { retryable: boolean; message: string; retryAfterMs?: number },
  ): Promise<void> {
    await this.finish(
      taskId,
      workerId,
      o.retryable
        ? { state: requeuedState(), last_error: o.message, run_after: this.now() + (o.retryAfterMs ?? 0) }
        : { state: 'failed', last_error: o.message },
    );
  }

  async release(
    taskId: string,
    workerId: string,
    opts: { delayMs?: number; waitFor?: readonly string[] } = {},
  ): Promise<void> {
    const r = await releaseTask(this.db, this.now(), taskId, workerId, opts);
    if (r?.claimable) this.signal?.notify(r.kind);
  }

  async jobEnded(jobId: string): Promise<void> {
    for (const kind of await wakeWaiters(this.db, jobId, this.now())) this.signal?.notify(kind);
  }

  /**
   * Only the worker holding the lease may finish a task: a late worker cannot undo a re-run. The
   * attempt's slot time is charged to the task's fair-share group.
   */
  protected async finish(taskId: string, workerId: string, set: FinishSet): Promise<void> {
    const now = this.now();
    const row = await this.db
      .updateTable('tasks')
      .set({ ...set, worker_id: null, lease_until: null, updated_at: new Date(now).toISOString() })
      .where('id', '=', taskId)
      .where('worker_id', '=', workerId)
      .where('state', '=', 'running')
      .returning(['kind', 'share_group', 'units', 'started_at', guessedGroups.as('guessed')])
      .executeTakeFirst();
    if (!row?.started_at || row.units <= 0) return;
    const seconds = (now - Date.parse(row.started_at)) / 1000;
    const guessed = Number(row.guessed);
    await chargeTime(this.db, { kind: row.kind, shareGroup: row.share_group, units: row.units, seconds, guessed }, now);
  }

  async cancelJob(jobId: string): Promise<number> {
    const r = await this.db
      .updateTable('tasks')
      .set({ state: 'canceled', worker_id: null, lease_until: null, updated_at: new Date(this.now()).toISOString() })
      .where('job_id', '=', jobId)
      .where('state', 'in', ['queued', 'running', 'paused'])
      .returning(['share_group', 'kind'])
      .execute();
    const first = r[0];
    if (first) await settleGroup(this.db, first.share_group, first.kind);
    return r.length;
  }

  jobTasks(jobId: string): Promise<TaskInfo[]> {
    return jobTasks(this.db, jobId);
  }

  jobTaskRuns(jobId: string): Promise<TaskRun[]> {
    return jobTaskRuns(this.db, jobId);
  }

  counts(): Promise<{ queued: number; running: number; done: number; failed: number }> {
    return counts(this.db);
  }

  countsByKind(): Promise<Record<TaskKind, { queued: number; running: number }>> {
    return countsByKind(this.db);
  }

  async recordFailure(jobId: string, worker: string): Promise<number> {
    const row = await this.db
      .insertInto('task_failures')
      .values({ job_id: jobId, worker, n: 1 })
      .onConflict((oc) => oc.columns(['job_id', 'worker']).doUpdateSet((eb) => ({ n: eb('task_failures.n', '+', 1) })))
      .returning('n')
      .executeTakeFirstOrThrow();
    return row.n;
  }

  async jobFailures(jobId: string): Promise<Record<string, number>> {
    const rows = await this.db
      .selectFrom('task_failures')
      .select(['worker', 'n'])
      .where('job_id', '=', jobId)
      .execute();
    return Object.fromEntries(rows.map((r) => [r.worker, r.n]));
  }

  async close(): Promise<void> {
    // The database is owned and closed by whoever opened it; the signal's listener is this queue's.
    await this.signal?.close();
  }

  pruneFinished(before: Date, limit: number): Promise<number> {
    return pruneFinished(this.db, before, limit);
  }
}
