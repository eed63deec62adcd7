// GET /jobs/{id}/logs?follow=true: the log as it grows. Each poll reads the job, its tasks and the
// log listing; new bytes of running attempts and runs that appear are sent under their headers.
// A follow ends when the job has ended and its runs are closed (or a grace has passed for runs a
// dead worker never closes), when its attempt ends, after `maxMs`, or once the job has shown no new
// byte and no change for `idleMs`: a follow of a job that never ends must not read storage forever.
// While nothing changes the polls back off (doubling up to `maxPollMs`), so an idle follow costs a
// read every few seconds, not every second; the first new byte brings the pace back.
import { setTimeout as sleep } from 'node:timers/promises';
import { TERMINAL_STATUSES } from '../../shared/job-status.js';
import { taskLogSegment } from '../domain/task-log-keys.js';
import type { ServiceContext } from '../context.js';
import type { TaskRun, TaskRunReader } from '../ports/tasks.js';
import {
  listRuns,
  orderRuns,
  readRun,
  runHeader,
  runState,
  type ListRunsOptions,
  type ReadRun,
} from './task-log-reader.js';

export interface LogFilter {
  taskSeg?: string;
  attempt?: number;
}

export interface FollowOptions {
  ctx: Pick<ServiceContext, 'jobs' | 'storage'>;
  tasks: TaskRunReader;
  workspaceId: string;
  jobId: string;
  filter: LogFilter;
  /** Ms between polls while bytes arrive. */
  pollMs: number;
  /** Longest pause between polls while nothing changes, ms. Default 15000 (at least pollMs). */
  maxPollMs?: number;
  /** How long, once the job ended, runs not closed yet are waited for, ms. */
  graceMs: number;
  /** Longest the follow stays open, ms. */
  maxMs: number;
  /** The follow ends after the job showed no new byte and no change this long, ms. */
  idleMs: number;
  signal: AbortSignal;
  /** Clock, epoch ms. Default Date.now. */
  now?: () => number;
}

/** Polls of a followed log in a row whose read may fail (a run ending meanwhile) before the stream gives up. */
const MAX_FAILED_POLLS = 3;

export function taskOf(run: ReadRun, tasks: readonly TaskRun[], jobId: string): TaskRun | undefined {
  return tasks.find((t) => taskLogSegment(t.id, jobId) === run.taskSeg);
}

/** Whether `run` is the newest run of its task among `runs`. */
export function newest(run: ReadRun, runs: readonly ReadRun[]): boolean {
  return !runs.some(
    (r) =>
      r.taskSeg === run.taskSeg &&
      r !== run &&
      (r.attempt > run.attempt || (r.attempt === run.attempt && r.startMs > run.startMs)),
  );
}

const seconds = (ms: number) => Math.round(ms / 1000);

export async function* followLog(o: FollowOptions): AsyncGenerator<Buffer> {
  const { jobId, signal } = o;
  const now = o.now ?? Date.now;
  const openedAt = now();
  const maxPollMs = Math.max(o.pollMs, o.maxPollMs ?? 15_000);
  const sent = new Map<string, number>();
  const closed = new Set<string>();
  const known: ListRunsOptions['known'] = new Map();
  let shown: string | undefined;
  let endedAt: number | undefined;
  let failedPolls = 0;
  let lastChangeAt = openedAt;
  let lastSeen = '';
  let delay = o.pollMs;
  const pause = () => sleep(delay, undefined, { signal }).catch(() => undefined);
  // An empty write sends the status and headers now: a client (and a cap test) learns at once that
  // the follow is open, even while no task has written a byte.
  yield Buffer.alloc(0);
  while (!signal.aborted) {
    const rec = await o.ctx.jobs.get(o.workspaceId, jobId);
    const ended = !rec || TERMINAL_STATUSES.has(rec.job.status);
    const tasks = await o.tasks.jobTaskRuns(jobId);
    let listed: ReadRun[];
    try {
      listed = await listRuns(o.ctx.storage, o.workspaceId, jobId, { ...o.filter, known });
      failedPolls = 0;
    } catch (err) {
      // A run that ends swaps its segments for its capped log: an object listed a moment ago can
      // be gone when read. The next poll sees the new state; only a lasting failure ends the stream.
      if (++failedPolls >= MAX_FAILED_POLLS) throw err;
      await pause();
      continue;
    }
    const runs = orderRuns(listed, tasks, jobId);
    let moved = false;
    for (const run of runs) {
      if (closed.has(run.id) || signal.aborted) continue;
      const task = taskOf(run, tasks, jobId);
      const from = sent.get(run.id) ?? 0;
      const { chunks, to } = await readRun(o.ctx.storage, run, from);
      // A header when a run first shows, and again whenever the output switches to another run.
      if (!sent.has(run.id) || (chunks.length > 0 && shown !== run.id)) {
        yield Buffer.from(
          `${shown === undefined ? '' : '\n'}${runHeader(run, task, runState(run, task, newest(run, runs)))}`,
        );
        shown = run.id;
        moved = true;
      }
      if (chunks.length > 0) moved = true;
      yield* chunks;
      sent.set(run.id, to);
      if (run.end) closed.add(run.id);
    }
    // One attempt asked for, and it has ended: nothing more will come.
    if (o.filter.taskSeg && o.filter.attempt !== undefined && runs.length > 0 && runs.every((r) => closed.has(r.id))) {
      yield Buffer.from(`\n[renderbridge] attempt ${o.filter.attempt} has ended: end of its log\n`);
      return;
    }
    const t = now();
    if (ended) {
      endedAt ??= t;
      // Runs still open once the job ended belong to workers that are closing them, or died.
      if (runs.every((r) => closed.has(r.id)) || t - endedAt >= o.graceMs) {
        yield Buffer.from(`\n[renderbridge] job ${rec?.job.status ?? 'gone'}: end of the log\n`);
        return;
      }
    }
    // A change of the job (status, progress written to it) or of its tasks counts as activity too.
    const taskStates = tasks.map((x) => `${x.id}:${x.state}:${x.attempts}`).join(',');
    const seen = `${rec?.job.status}|${rec?.job.updatedAt}|${taskStates}`;
    if (seen !== lastSeen) moved = true;
    lastSeen = seen;
    if (moved) {
      lastChangeAt = t;
      delay = o.pollMs;
    } else {
      delay = Math.min(maxPollMs, delay * 2);
    }
    if (t - openedAt >= o.maxMs) {
      yield Buffer.from(
        `\n[renderbridge] this follow has been open for ${seconds(o.maxMs)} s, the most this service allows: ` +
          `follow again to go on (the job goes on)\n`,
      );
      return;
    }
    if (t - lastChangeAt >= o.idleMs) {
      yield Buffer.from(
        `\n[renderbridge] the job has shown no new output and no change for ${seconds(o.idleMs)} s: the ` +
          `follow ends here; follow again to go on (the job goes on)\n`,
      );
      return;
    }
    // Never sleep past the moment the follow must end.
    delay = Math.max(1, Math.min(delay, o.maxMs - (t - openedAt), o.idleMs - (t - lastChangeAt)));
    await pause();
  }
}
