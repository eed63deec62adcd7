// The worker's part of a requeue (extension job-requeue): once validation passes, the new job
// renders with the old job's request, and its plan copies the frames the old job finished
// instead of rendering them again.
import { initialScheduling, scheduled } from '../../domain/scheduling.js';
import type { Logger } from 'pino';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import { expandFrameRanges } from '../../domain/frame-ranges.js';
import { moveJob, stoppedJobInternal } from '../../domain/job-lifecycle.js';
import { checkAgainstAnalysis } from '../../domain/render-config.js';
import { newTasks } from '../../domain/tasks.js';
import type { JobRecord } from '../../ports/jobs.js';
import { frameOfFile, outputLayout } from '../outputs/chunk-files.js';
import { stagingPrefix } from '../outputs/frame-staging.js';
import { copyableFrames, copyFrameFiles, filesOfEndedJob, type SourceFile } from '../outputs/kept-frames.js';
import { jobDirOf } from '../project/job-files.js';
import type { WorkerEnv } from '../runtime/env.js';
import { FatalTaskError } from '../runtime/outcomes.js';

/**
 * Starts the render of a validated requeued job with the old job's request, as POST /render
 * would. The job moves before its task is enqueued: a worker elsewhere, woken by the enqueue,
 * must not find it still `validated` (it would drop the task); a crash in between is repaired by
 * the validate task's retry, which comes here again and enqueues (an existing task id adds
 * nothing). A request the new analysis refuses (its camera is gone) fails the job. Nothing to do
 * for an uploaded job, or a requeue of a job that never asked for a render (it waits in
 * `validated` for POST /render).
 */
export async function startRequeuedRender(
  env: Pick<WorkerEnv, 'jobs' | 'queue' | 'settings'>,
  rec: JobRecord,
  log: Logger,
): Promise<void> {
  const cfg = rec.internal.requeue?.requestedConfig;
  if (!cfg) return;
  let now: JobRecord | undefined = rec;
  if (now.job.status === 'validated' && !now.internal.renderRequestedAt) {
    const problems = checkAgainstAnalysis(now, cfg);
    if (problems.length > 0) {
      const reason = new FatalTaskError({
        name: 'REQUEUE_CONFIG_INVALID',
        type: 'VALIDATION_FAILED',
        errorDetails: {
          message:
            "The old job's render request does not fit the scene any more: " +
            `${problems.map((p) => p.message).join('; ')}`,
          problems,
        },
      });
      await moveJob(
        env.jobs,
        rec.job.id,
        'fail',
        { failedReason: reason.failedReason },
        stoppedJobInternal(env.settings.outputRetentionDays),
      );
      return;
    }
    now = await moveJob(
      env.jobs,
      rec.job.id,
      'startRender',
      // The defaults of extension scheduling, keeping a priority set on this job before its render.
      { requestedConfig: cfg, scheduling: initialScheduling({ priority: rec.job.scheduling?.priority }, []) },
      { renderRequestedAt: new Date().toISOString() },
    );
    if (now) log.info({ from: rec.internal.requeue?.fromJobId }, 'requeued job: render started with the old request');
  }
  if (now?.job.status === 'booting') await env.queue.enqueue(scheduled(newTasks.render(now.job.id), now.job));
}

/**
 * For a requeued job: copies into it the files of the frames the old job finished that are not
 * asked to render again, and answers those frames (empty for any other job). Copies land where
 * this job's finalize looks: staged objects when other machines may finalize, else `out/` here.
 */
export async function copyRequeuedFrames(
  env: WorkerEnv,
  rec: JobRecord,
  final: FinalConfig,
  frames: readonly number[],
  log: Logger,
): Promise<number[]> {
  const rq = rec.internal.requeue;
  if (!rq) return [];
  const files = await filesOfChain(env, rq.fromJobId, rec.job.id);
  if (files.length === 0) return [];
  const copy = copyableFrames(final, frames, files, new Set(rq.rerender ? expandFrameRanges(rq.rerender) : []));
  if (copy.length === 0) return [];
  const to = env.settings.stageFrames
    ? { stagingPrefix: stagingPrefix(rec.job.id) }
    : { out: outputLayout(jobDirOf(env.settings.workRoot, rec.job.id)) };
  const copied = await copyFrameFiles(env.storage, files, new Set(copy), to);
  log.info({ from: rq.fromJobId, frames: copy.length, files: copied }, 'frames copied from the requeued job');
  return copy;
}

/** How far back a chain of requeues is followed for frames. */
const MAX_CHAIN = 10;

/**
 * The files the job `fromJobId` offers, and, for frames it has none of, those of the job it was
 * itself requeued from, and so on (a requeue that failed before rendering anything still passes
 * on its predecessor's frames). Not past a requeue that asked frames to be rendered again: their
 * older files are what that request replaced.
 */
async function filesOfChain(
  env: Pick<WorkerEnv, 'jobs' | 'storage'>,
  fromJobId: string,
  via: string,
): Promise<SourceFile[]> {
  const files: SourceFile[] = [];
  // A frame comes whole from one job: the newest that has any of its files.
  const framesHad = new Set<number | undefined>();
  let id: string | undefined = fromJobId;
  for (let depth = 0; id && depth < MAX_CHAIN; depth++) {
    const src = await env.jobs.getById(id, { via });
    if (!src) break;
    const own = (await filesOfEndedJob(env.storage, src)).filter((f) => !framesHad.has(frameOfFile(f.rel)));
    files.push(...own);
    for (const f of own) framesHad.add(frameOfFile(f.rel));
    id = src.internal.requeue && !src.internal.requeue.rerender ? src.internal.requeue.fromJobId : undefined;
  }
  return files;
}
