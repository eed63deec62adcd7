// GET /jobs/{id}/logs and GET /jobs/{id}/logs/index (extension task-logs): the logs workers store
// for every run of every task attempt, read back from object storage. The text route streams each
// run under a header line; with `follow=true` it stays open, sending new bytes of running attempts
// and the runs that appear, and ends once the job has ended and its runs are closed (or a grace
// has passed for runs whose worker died). Another workspace's job is a 404, as everywhere.
import { setTimeout as sleep } from 'node:timers/promises';
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { TERMINAL_STATUSES } from '../../shared/job-status.js';
import { ROUTES } from '../../shared/routes.js';
import type { TaskLogTask } from '../../shared/api/task-logs.js';
import { taskLogSegment } from '../domain/task-log-keys.js';
import { ApiError } from '../http/api-error.js';
import { requireAuth } from '../http/auth.js';
import type { ServiceContext } from '../context.js';
import type { TaskRun, TaskRunReader } from '../ports/tasks.js';
import { listRuns, orderRuns, readRun, runHeader, runState, type ListRunsOptions, type ReadRun } from '../logs/task-log-reader.js';
import { loadJob } from './jobs.js';

export interface TaskLogRouteDeps {
  ctx: ServiceContext;
  tasks: TaskRunReader;
  /** How often a followed log is read again. Default 1000 ms (workers store new bytes about once a second). */
  followPollMs?: number;
  /** How long a follow waits, once the job has ended, for runs not closed yet (a dead worker never closes its). Default 10000 ms. */
  followGraceMs?: number;
}

interface Filter {
  taskSeg?: string;
  attempt?: number;
}

const TEXT_TYPE = 'text/plain; charset=utf-8';

export const taskLogRoutes: FastifyPluginAsyncZod<TaskLogRouteDeps> = async (app, deps) => {
  const { ctx } = deps;
  const pollMs = deps.followPollMs ?? 1000;
  const graceMs = deps.followGraceMs ?? 10_000;

  const text = ROUTES.getJobLogs;
  app.get(text.path, { schema: { params: text.params, querystring: text.query } }, async (req, reply) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    const jobId = rec.job.id;
    const filter = filterOf(req.query.task, req.query.attempt, jobId);
    const follow = req.query.follow === 'true';
    const tasks = await deps.tasks.jobTaskRuns(jobId);
    const runs = await listRuns(ctx.storage, rec.job.workspaceId, jobId, filter);
    // A task or attempt that has no log (yet): 404, unless following a task of this job that may still start.
    const taskKnown = !filter.taskSeg || tasks.some((t) => taskLogSegment(t.id, jobId) === filter.taskSeg);
    if ((!taskKnown && runs.length === 0) || (!follow && filter.attempt !== undefined && runs.length === 0)) {
      throw new ApiError('TASK_LOG_NOT_FOUND', { metadata: { jobId, ...(req.query.task ? { task: req.query.task } : {}), ...(filter.attempt ? { attempt: filter.attempt } : {}) } });
    }
    reply.header('content-type', TEXT_TYPE).header('cache-control', 'no-store');
    if (!follow) return reply.send(Readable.from(wholeLog(deps, rec.job.workspaceId, jobId, orderRuns(runs, tasks, jobId), tasks)));
    // nginx buffers responses unless told not to: followed lines would arrive in bursts.
    reply.header('x-accel-buffering', 'no');
    const stop = new AbortController();
    req.raw.socket?.once('close', () => stop.abort());
    reply.raw.once('close', () => stop.abort());
    return reply.send(Readable.from(followLog({ deps, workspaceId: rec.job.workspaceId, jobId, filter, pollMs, graceMs, signal: stop.signal })));
  });

  const index = ROUTES.getJobLogIndex;
  app.get(index.path, { schema: { params: index.params, querystring: index.query } }, async (req) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    const jobId = rec.job.id;
    const filter = filterOf(req.query.task, undefined, jobId);
    const tasks = await deps.tasks.jobTaskRuns(jobId);
    const runs = orderRuns(await listRuns(ctx.storage, rec.job.workspaceId, jobId, filter), tasks, jobId);
    if (filter.taskSeg && runs.length === 0 && !tasks.some((t) => taskLogSegment(t.id, jobId) === filter.taskSeg)) {
      throw new ApiError('TASK_LOG_NOT_FOUND', { metadata: { jobId, task: req.query.task } });
    }
    return { data: { jobId, tasks: indexOf(runs, tasks, jobId, filter) } };
  });
};

function filterOf(task: string | undefined, attempt: number | undefined, jobId: string): Filter {
  if (task === undefined) return attempt === undefined ? {} : { attempt };
  const taskSeg = taskLogSegment(task, jobId);
  // A task id of another job (or none at all) names no log of this one.
  if (!taskSeg || !task.includes(jobId)) throw new ApiError('TASK_LOG_NOT_FOUND', { metadata: { jobId, task } });
  return { taskSeg, ...(attempt !== undefined ? { attempt } : {}) };
}

function taskOf(run: ReadRun, tasks: readonly TaskRun[], jobId: string): TaskRun | undefined {
  return tasks.find((t) => taskLogSegment(t.id, jobId) === run.taskSeg);
}

/** Whether `run` is the newest run of its task among `runs`. */
function newest(run: ReadRun, runs: readonly ReadRun[]): boolean {
  return !runs.some((r) => r.taskSeg === run.taskSeg && r !== run && (r.attempt > run.attempt || (r.attempt === run.attempt && r.startMs > run.startMs)));
}

async function* wholeLog(deps: TaskLogRouteDeps, workspaceId: string, jobId: string, runs: ReadRun[], tasks: TaskRun[]): AsyncGenerator<Buffer> {
  if (runs.length === 0) yield Buffer.from('[renderbridge] no task has written a log yet\n');
  for (const run of runs) {
    const task = taskOf(run, tasks, jobId);
    yield Buffer.from(runHeader(run, task, runState(run, task, newest(run, runs))));
    const { chunks, to } = await readRun(deps.ctx.storage, run, 0);
    yield* chunks;
    if (!run.end && run.segments.length > 0 && to < run.segments.at(-1)!.offset + run.segments.at(-1)!.size) {
      // A segment went away while reading: the run just ended, and its capped log has the rest.
      const again = (await listRuns(deps.ctx.storage, workspaceId, jobId, { taskSeg: run.taskSeg, attempt: run.attempt })).find((r) => r.id === run.id);
      if (again) yield* (await readRun(deps.ctx.storage, again, to)).chunks;
    }
    yield Buffer.from('\n');
  }
}

/** Polls of a followed log in a row whose read may fail (a run ending meanwhile) before the stream gives up. */
const MAX_FAILED_POLLS = 3;

interface FollowOptions {
  deps: TaskLogRouteDeps;
  workspaceId: string;
  jobId: string;
  filter: Filter;
  pollMs: number;
  graceMs: number;
  signal: AbortSignal;
}

async function* followLog(o: FollowOptions): AsyncGenerator<Buffer> {
  const { deps, jobId, signal } = o;
  const sent = new Map<string, number>();
  const closed = new Set<string>();
  const known: ListRunsOptions['known'] = new Map();
  let shown: string | undefined;
  let endedAt: number | undefined;
  let failedPolls = 0;
  while (!signal.aborted) {
    const rec = await deps.ctx.jobs.get(o.workspaceId, jobId);
    const ended = !rec || TERMINAL_STATUSES.has(rec.job.status);
    const tasks = await deps.tasks.jobTaskRuns(jobId);
    let listed: ReadRun[];
    try {
      listed = await listRuns(deps.ctx.storage, o.workspaceId, jobId, { ...o.filter, known });
      failedPolls = 0;
    } catch (err) {
      // A run that ends swaps its segments for its capped log: an object listed a moment ago can
      // be gone when read. The next poll sees the new state; only a lasting failure ends the stream.
      if (++failedPolls >= MAX_FAILED_POLLS) throw err;
      await sleep(o.pollMs, undefined, { signal }).catch(() => undefined);
      continue;
    }
    const runs = orderRuns(listed, tasks, jobId);
    for (const run of runs) {
      if (closed.has(run.id) || signal.aborted) continue;
      const task = taskOf(run, tasks, jobId);
      const from = sent.get(run.id) ?? 0;
      const { chunks, to } = await readRun(deps.ctx.storage, run, from);
      // A header when a run first shows, and again whenever the output switches to another run.
      if (!sent.has(run.id) || (chunks.length > 0 && shown !== run.id)) {
        yield Buffer.from(`${shown === undefined ? '' : '\n'}${runHeader(run, task, runState(run, task, newest(run, runs)))}`);
        shown = run.id;
      }
      yield* chunks;
      sent.set(run.id, to);
      if (run.end) closed.add(run.id);
    }
    // One attempt asked for, and it has ended: nothing more will come.
    if (o.filter.taskSeg && o.filter.attempt !== undefined && runs.length > 0 && runs.every((r) => closed.has(r.id))) {
      yield Buffer.from(`\n[renderbridge] attempt ${o.filter.attempt} has ended: end of its log\n`);
      return;
    }
    if (ended) {
      endedAt ??= Date.now();
      // Runs still open once the job ended belong to workers that are closing them, or died.
      if (runs.every((r) => closed.has(r.id)) || Date.now() - endedAt >= o.graceMs) {
        yield Buffer.from(`\n[renderbridge] job ${rec?.job.status ?? 'gone'}: end of the log\n`);
        return;
      }
    }
    await sleep(o.pollMs, undefined, { signal }).catch(() => undefined);
  }
}

function indexOf(runs: readonly ReadRun[], tasks: readonly TaskRun[], jobId: string, f: Filter): TaskLogTask[] {
  const out = new Map<string, TaskLogTask>();
  for (const t of tasks) {
    const seg = taskLogSegment(t.id, jobId);
    if (!seg || (f.taskSeg && seg !== f.taskSeg)) continue;
    out.set(seg, { id: t.id, kind: t.kind, state: t.state, frames: t.frames, attempts: [] });
  }
  for (const run of runs) {
    const task = taskOf(run, tasks, jobId);
    let entry = out.get(run.taskSeg);
    if (!entry) {
      entry = { id: run.start?.taskId ?? run.taskSeg, kind: run.start?.kind ?? 'task', state: null, frames: run.start?.frames ?? null, attempts: [] };
      out.set(run.taskSeg, entry);
    }
    const last = run.segments.at(-1);
    const live = !run.end;
    entry.attempts.push({
      attempt: run.attempt,
      runId: run.id,
      worker: run.start?.worker ?? null,
      startedAt: run.start?.startedAt ?? null,
      endedAt: run.end?.endedAt ?? null,
      state: runState(run, task, newest(run, runs)),
      live,
      storedBytes: live ? run.segments.reduce((n, s) => n + s.size, 0) : (run.final?.size ?? 0),
      totalBytes: live ? (last ? last.offset + last.size : 0) : run.end!.totalBytes,
      omittedBytes: live ? gapBytes(run) : run.end!.tailStart - run.end!.headBytes,
    });
  }
  return [...out.values()];
}

/** Bytes missing between a live run's segments (deleted out of the tail). */
function gapBytes(run: ReadRun): number {
  let at = 0;
  let gaps = 0;
  for (const s of run.segments) {
    if (s.offset > at) gaps += s.offset - at;
    at = Math.max(at, s.offset + s.size);
  }
  return gaps;
}
