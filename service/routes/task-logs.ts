// GET /jobs/{id}/logs and GET /jobs/{id}/logs/index (extension task-logs): the logs workers store
// for every run of every task attempt, read back from object storage. The text route streams each
// run under a header line; with `follow=true` it stays open, sending new bytes of running attempts
// and the runs that appear, and ends once the job has ended and its runs are closed (or a grace
// has passed for runs whose worker died), or at the limits of service/logs/log-follow.ts; follows
// are capped per key and per process (StreamGate). Another workspace's job is a 404, as everywhere.
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ROUTES } from '../../shared/routes.js';
import type { TaskLogTask } from '../../shared/api/task-logs.js';
import { taskLogSegment } from '../domain/task-log-keys.js';
import { ApiError } from '../http/api-error.js';
import { requireAuth } from '../http/auth.js';
import type { ServiceContext } from '../context.js';
import type { TaskRun, TaskRunReader } from '../ports/tasks.js';
import { listRuns, orderRuns, readRun, runHeader, runState, type ReadRun } from '../logs/task-log-reader.js';
import { followLog, newest, taskOf, type LogFilter } from '../logs/log-follow.js';
import type { StreamGate } from '../http/stream-gate.js';
import { loadJob } from './jobs.js';

export interface TaskLogRouteDeps {
  ctx: ServiceContext;
  tasks: TaskRunReader;
  /** How often a followed log is read again. Default 1000 ms (workers store new bytes about once a second). */
  followPollMs?: number;
  /**
   * How long a follow waits, once the job has ended, for runs not closed yet (a dead worker never
   * closes its). Default 10000 ms.
   */
  followGraceMs?: number;
  /** Longest pause between polls of a follow while nothing changes. Default 15000 ms. */
  followMaxPollMs?: number;
  /** Places for open follows, per key and per process. Default none: not capped. */
  gate?: StreamGate;
}

type Filter = LogFilter;

/** What the text route was asked, once authenticated. */
interface LogQuery {
  workspaceId: string;
  id: string;
  task: string | undefined;
  attempt: number | undefined;
}

const TEXT_TYPE = 'text/plain; charset=utf-8';

export const taskLogRoutes: FastifyPluginAsyncZod<TaskLogRouteDeps> = async (app, deps) => {
  const { ctx } = deps;
  const pollMs = deps.followPollMs ?? 1000;
  const graceMs = deps.followGraceMs ?? 10_000;
  // Open follows would keep the server from closing (a job may not end for hours): end them first.
  const follows = new Set<AbortController>();
  app.addHook('preClose', async () => {
    for (const f of follows) f.abort();
  });

  const text = ROUTES.getJobLogs;
  app.get(text.path, { schema: { params: text.params, querystring: text.query } }, async (req, reply) => {
    const auth = requireAuth(req);
    const follow = req.query.follow === 'true';
    // A follow's place is taken before anything is read: a flood of follows reads nothing.
    const release = (follow && deps.gate?.acquire(auth.keyId)) || (() => undefined);
    try {
      return await answer(
        { workspaceId: auth.workspaceId, id: req.params.id, task: req.query.task, attempt: req.query.attempt },
        req.raw,
        reply,
        follow,
        release,
      );
    } catch (err) {
      release();
      throw err;
    }
  });

  const answer = async (
    q: LogQuery,
    raw: IncomingMessage,
    reply: FastifyReply,
    follow: boolean,
    release: () => void,
  ) => {
    const rec = await loadJob(ctx, q.workspaceId, q.id);
    const jobId = rec.job.id;
    const filter = filterOf(q.task, q.attempt, jobId);
    const tasks = await deps.tasks.jobTaskRuns(jobId);
    const runs = await listRuns(ctx.storage, rec.job.workspaceId, jobId, filter);
    // A task or attempt that has no log (yet): 404, unless following a task of this job that may still start.
    const taskKnown = !filter.taskSeg || tasks.some((t) => taskLogSegment(t.id, jobId) === filter.taskSeg);
    if ((!taskKnown && runs.length === 0) || (!follow && filter.attempt !== undefined && runs.length === 0)) {
      throw new ApiError('TASK_LOG_NOT_FOUND', {
        metadata: {
          jobId,
          ...(q.task ? { task: q.task } : {}),
          ...(filter.attempt ? { attempt: filter.attempt } : {}),
        },
      });
    }
    reply.header('content-type', TEXT_TYPE).header('cache-control', 'no-store');
    if (!follow)
      return reply.send(
        Readable.from(wholeLog(deps, rec.job.workspaceId, jobId, orderRuns(runs, tasks, jobId), tasks)),
      );
    // nginx buffers responses unless told not to: followed lines would arrive in bursts.
    reply.header('x-accel-buffering', 'no');
    const stop = new AbortController();
    follows.add(stop);
    stop.signal.addEventListener('abort', () => (follows.delete(stop), release()), { once: true });
    raw.socket?.once('close', () => stop.abort());
    reply.raw.once('close', () => stop.abort());
    const follower = followLog({
      ctx,
      tasks: deps.tasks,
      workspaceId: rec.job.workspaceId,
      jobId,
      filter,
      pollMs,
      graceMs,
      maxMs: ctx.config.streamMaxSeconds * 1000,
      idleMs: ctx.config.logFollowIdleSeconds * 1000,
      ...(deps.followMaxPollMs ? { maxPollMs: deps.followMaxPollMs } : {}),
      signal: stop.signal,
    });
    return reply.send(Readable.from(follower));
  };

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

async function* wholeLog(
  deps: TaskLogRouteDeps,
  workspaceId: string,
  jobId: string,
  runs: ReadRun[],
  tasks: TaskRun[],
): AsyncGenerator<Buffer> {
  if (runs.length === 0) yield Buffer.from('[renderbridge] no task has written a log yet\n');
  for (const run of runs) {
    const task = taskOf(run, tasks, jobId);
    yield Buffer.from(runHeader(run, task, runState(run, task, newest(run, runs))));
    const { chunks, to } = await readRun(deps.ctx.storage, run, 0);
    yield* chunks;
    if (!run.end && run.segments.length > 0 && to < run.segments.at(-1)!.offset + run.segments.at(-1)!.size) {
      // A segment went away while reading: the run just ended, and its capped log has the rest.
      const again = (
        await listRuns(deps.ctx.storage, workspaceId, jobId, { taskSeg: run.taskSeg, attempt: run.attempt })
      ).find((r) => r.id === run.id);
      if (again) yield* (await readRun(deps.ctx.storage, again, to)).chunks;
    }
    yield Buffer.from('\n');
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
      entry = {
        id: run.start?.taskId ?? run.taskSeg,
        kind: run.start?.kind ?? 'task',
        state: null,
        frames: run.start?.frames ?? null,
        attempts: [],
      };
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
