// A render task in warm mode: its frames (a guided chunk: several early in the job, one at its
// end) are rendered by the slot's warm Blender for the job, which loaded the scene once and stays
// for the job's next chunks (WarmPool); each same-step run of them is one render call. Slots
// claim chunks from the queue one after another, so every slot and worker finishes within about
// a frame of the others; the lane claims its next task as soon as this one's frames are queued
// in Blender (ctx.handedOff), so Blender never waits for the queue. A crash or a hang fails this
// task only: its retry renders the frames not done yet (elsewhere first, see placement.ts), and
// runs queued behind a dead process go to a new one without losing an attempt.
import { FrameNotStartedError } from '../../../blender/errors.js';
import type { FrameRun } from '../../../blender/render/warm-process.js';
import { frameRuns } from '../../domain/frame-ranges.js';
import { taskPayload, type ChunkPayload } from '../../domain/tasks.js';
import type { Logger } from 'pino';
import type { JobRecord } from '../../ports/jobs.js';
import type { Task } from '../../ports/tasks.js';
import type { WorkerEnv } from '../runtime/env.js';
import { FatalTaskError, RetryableTaskError } from '../runtime/outcomes.js';
import type { Lane, TaskContext, TaskHandler } from '../runtime/runtime.js';
import type { WarmPool } from '../runtime/warm-pool.js';
import { planBinary } from '../render/blender-setup.js';
import { syncFrames } from '../outputs/durable-frames.js';
import type { JobRun, JobRuns } from '../render/job-run.js';
import { warmKey } from '../render/warm-key.js';
import { WarmRender } from '../render/warm-render.js';
import { singleFrames, type PreemptionWatch } from '../render/warm-preemption.js';
import { clearHandBack, wasHandedBack } from '../render/preemption-notice.js';

/** New processes one frame may need when the ones it was handed to end before it (each crash fails its own frame). */
const MAX_HANDOVERS = 3;

export interface FramesHandler {
  handler: TaskHandler;
  /**
   * A render was just planned here: its scene starts loading on up to one idle slot per frame,
   * so the first frames find Blender loading already. Best effort: failures are only logged.
   */
  prewarm(rec: JobRecord, lanes: readonly Pick<Lane, 'name' | 'slot'>[], log: Logger): Promise<void>;
}

/** `preemption`: the worker's watch when its operator turned preemption on. Default none: frames always finish. */
export function renderFramesHandler(
  env: WorkerEnv,
  pool: WarmPool<WarmRender>,
  runs: JobRuns,
  preemption?: PreemptionWatch,
): FramesHandler {
  const handler: TaskHandler = async (task, ctx) => {
    const rec = ctx.job;
    if (rec.job.status !== 'booting' && rec.job.status !== 'rendering') return;
    let chunk: ChunkPayload;
    try {
      chunk = taskPayload({ ...task, kind: 'render-chunk' });
    } catch (err) {
      throw FatalTaskError.render('BAD_TASK_PAYLOAD', (err as Error).message);
    }
    const run = await runs.acquire(rec, ctx.signal);
    try {
      // A task run before (a retry, a lease that ran out, a hand-back to a higher-priority job) may
      // find its frames done, or staged, by that run; a first run trusts the queue and asks the disk nothing.
      const handedBack = wasHandedBack(rec, task.id);
      const again = task.attempts > 1 || handedBack;
      if (handedBack) void clearHandBack(env.jobs, rec.job.id, task.id, ctx.log);
      if (run.staging && again) await run.staging.fetchMissing(run.out, new Set(chunk.frames));
      const todo = again
        ? await run.framesToDo(chunk.frames)
        : chunk.frames.filter((f) => !run.tracker.doneFrames.has(f));
      // Each run of frames is one render call in Blender, as `-s -e -j -a` would render it; with
      // preemption on, one call per frame, each after a look at the queue (warm-preemption.ts).
      const spans = preemption ? singleFrames(todo) : frameRuns(todo);
      for (const [i, r] of spans.entries()) {
        await preemption?.beforeFrame(ctx, run.out, todo, i, task.id);
        await renderRun(
          env,
          pool,
          run,
          task,
          ctx,
          { start: r.start, end: r.end, step: r.step },
          i === spans.length - 1,
        );
      }
      if (spans.length === 0) ctx.handedOff();
      // On the disk before the queue hears the task is done: nothing renders a done task's frames again.
      await syncFrames(run.out, chunk.frames);
    } finally {
      runs.release(run);
    }
  };
  const prewarm: FramesHandler['prewarm'] = async (rec, lanes, log) => {
    const run = await runs.acquire(rec, new AbortController().signal);
    try {
      const binary = planBinary(env, run.plan);
      for (const lane of lanes.slice(0, run.plan.frames)) {
        const laneLog = log.child({ jobId: run.jobId, lane: lane.name });
        const started = pool.prestart(lane.name, warmKey(run, binary), run.jobId, () =>
          WarmRender.start({ env, run, lane: lane.name, slot: lane.slot, binary, log: laneLog }),
        );
        if (started) laneLog.info('scene loading ahead of the first frame');
      }
    } finally {
      runs.release(run);
    }
  };
  return {
    handler,
    prewarm: (rec, lanes, log) =>
      prewarm(rec, lanes, log).catch((err: unknown) => log.warn({ err }, 'loading the scene ahead failed')),
  };
}

async function renderRun(
  env: WorkerEnv,
  pool: WarmPool<WarmRender>,
  run: JobRun,
  task: Task,
  ctx: TaskContext,
  frames: FrameRun,
  last: boolean,
): Promise<void> {
  const binary = planBinary(env, run.plan);
  const key = warmKey(run, binary);
  const start = () => WarmRender.start({ env, run, lane: ctx.lane.name, slot: ctx.lane.slot, binary, log: ctx.log });
  for (let handovers = 0; ; handovers++) {
    try {
      await pool.use(ctx.lane.name, key, run.jobId, start, (warm) => warm.render(run, frames, task, ctx, last));
      return;
    } catch (err) {
      if (!(err instanceof FrameNotStartedError) || ctx.signal.aborted) throw err;
      ctx.log.info({ frame: frames.start }, 'frames handed to a new warm Blender: the one they waited for ended');
      if (handovers + 1 >= MAX_HANDOVERS)
        throw new RetryableTaskError(`warm Blender ended ${MAX_HANDOVERS} times before frame ${frames.start}`, {
          frame: frames.start,
        });
    }
  }
}
