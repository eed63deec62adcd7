// A frame that ran out of memory: told apart from other failures (the kernel killed Blender while
// its cgroup counted an OOM kill, or Blender said so itself), recorded on the job as a proven need
// (more than this slot's memory), and retried on a slot with more, the CPU's RAM included when a
// GPU was too small. Only when no live slot of the farm has more does the job fail, with
// OUT_OF_MEMORY naming the peak and the largest slot. The other failures are task-failure.ts's.
import type { Logger } from 'pino';
import { highestMemoryFigure, outOfMemoryLine } from '../../../blender/out-of-memory.js';
import { moveJob } from '../../domain/job-lifecycle.js';
import { gib, type JobMemory } from '../../domain/job-memory.js';
import type { WorkerJobStore } from '../../ports/jobs.js';
import type { Task, TaskLeases, TaskSubmitter } from '../../ports/tasks.js';
import type { TaskOutcome } from '../../metrics/registry.js';
import { redactPaths } from './failed-reason.js';
import { FatalTaskError } from './outcomes.js';
import type { MemoryFit } from './memory-fit.js';

/** What a failed run showed of running out of memory. */
export interface OutOfMemory {
  /** Blender's own line, when it could still print one. */
  line: string | undefined;
  /** The highest memory figure it printed, bytes (null: none). */
  peakBytes: number | null;
  /** The kernel killed it at its cgroup's limit (else Blender failed an allocation and said so). */
  killedByKernel: boolean;
  /** The frame it was rendering (null: loading the scene, or unknown). */
  frame: number | null;
  lastLines: string[];
}

/**
 * The run's out-of-memory facts, or undefined when it failed for another reason. `kernelKill`:
 * the slot's (or worker's) cgroup counted an OOM kill while the task ran; it counts only for a
 * Blender that died of SIGKILL, which is how the kernel kills.
 */
export function outOfMemoryOf(err: unknown, kernelKill: boolean): OutOfMemory | undefined {
  const details: Record<string, unknown> =
    err instanceof FatalTaskError
      ? err.failedReason.errorDetails
      : ((err as { details?: Record<string, unknown> } | undefined)?.details ?? {});
  const lastLines = Array.isArray(details.lastLines) ? details.lastLines.map(String) : [];
  const errors = Array.isArray(details.errors) ? details.errors.map(String) : [];
  const line = outOfMemoryLine([...errors, ...lastLines]);
  const killed = kernelKill && (details.signal === 'SIGKILL' || details.exitCode === 137);
  if (!line && !killed) return undefined;
  const frame = typeof details.lastFrame === 'number' ? details.lastFrame : null;
  return {
    line,
    peakBytes: highestMemoryFigure(lastLines),
    killedByKernel: killed,
    frame,
    lastLines: lastLines.slice(-20),
  };
}

export interface OomDeps {
  jobs: WorkerJobStore;
  queue: TaskLeases & Pick<TaskSubmitter, 'cancelJob'>;
  fit: MemoryFit;
  /** This worker's render slots' memory (the farm may not be known: a remote worker). */
  ownSlots: readonly (number | undefined)[];
  /** Attempts a task gets where the farm is not known (RuntimeOptions.maxAttempts). */
  maxAttempts: number;
  /** Worker-local folders replaced in a failedReason. Default none. */
  privatePaths?: readonly string[];
}

export interface OomRun {
  task: Task;
  slotName: string;
  /** The memory of the slot it ran in, bytes; undefined: unknown (the machine's). */
  slotMemoryBytes: number | undefined;
  workerId: string;
  log: Logger;
  jobStopped: () => Promise<void>;
  /** Told the outcome before the queue or the job hears it (FailedRun.ending). Default: nothing. */
  ending?: (outcome: TaskOutcome) => Promise<void>;
}

/** Records the need, then retries elsewhere or fails the job with OUT_OF_MEMORY. */
export async function settleOutOfMemory(deps: OomDeps, run: OomRun, oom: OutOfMemory): Promise<TaskOutcome> {
  const { task, log } = run;
  const rec = await deps.jobs.getById(task.jobId);
  const before = rec?.internal.memory;
  const killedIn = run.slotMemoryBytes ?? Math.max(0, ...deps.ownSlots.map((m) => m ?? 0));
  const memory: JobMemory = {
    ...before,
    outOfMemoryAboveBytes: Math.max(before?.outOfMemoryAboveBytes ?? 0, killedIn),
    lastOutOfMemory: { frame: oom.frame, slot: run.slotName, peakBytes: oom.peakBytes, at: new Date().toISOString() },
  };
  await deps.jobs.update(task.jobId, {}, { memory });
  const largest = await deps.fit.largestSlot(deps.ownSlots);
  const need = memory.outOfMemoryAboveBytes!;
  const bigger = largest !== undefined && largest > need;
  log.warn({ oom, slotMemoryBytes: killedIn, largestSlotBytes: largest }, 'frame ran out of memory');
  if (bigger || (!deps.fit.knowsFarm && task.attempts < deps.maxAttempts)) {
    // A slot with more memory may take it: not this task's fault, so the attempt does not count
    // where the farm is known (each retry raises the need, so this ends); elsewhere it does.
    await run.ending?.('retried');
    if (deps.fit.knowsFarm) await deps.queue.release(task.id, run.workerId);
    else await deps.queue.fail(task.id, run.workerId, { retryable: true, message: 'out of memory', retryAfterMs: 0 });
    return 'retried';
  }
  const reason = redactPaths(outOfMemoryReason(oom, killedIn, largest ?? killedIn), deps.privatePaths ?? []);
  log.error({ failedReason: reason }, 'no slot has the memory the frame needs; failing the job');
  await run.ending?.('failed');
  await moveJob(deps.jobs, task.jobId, 'fail', { failedReason: reason });
  await deps.queue.fail(task.id, run.workerId, { retryable: false, message: String(reason.errorDetails.message) });
  await deps.queue.cancelJob(task.jobId);
  await run.jobStopped();
  return 'failed';
}

/** The job's failedReason: what ran out, where, and what to do. */
export function outOfMemoryReason(oom: OutOfMemory, killedInBytes: number, largestBytes: number) {
  const frame = oom.frame !== null ? `Frame ${oom.frame}` : 'Loading the scene';
  // A process the kernel killed used the slot's whole memory, whatever Blender printed last.
  const peak = Math.max(oom.peakBytes ?? 0, oom.killedByKernel ? killedInBytes : 0);
  const how = oom.killedByKernel ? 'was killed by the kernel' : `failed to allocate ("${oom.line?.trim()}")`;
  return new FatalTaskError({
    name: 'OUT_OF_MEMORY',
    type: 'RENDER_FAILED',
    errorDetails: {
      message:
        `${frame} ran out of memory: it ${how} at a peak of ${gib(peak)} in a slot of ${gib(killedInBytes)}, ` +
        `and the largest live slot on the farm has ${gib(largestBytes)}. Render it on a worker with more memory ` +
        '(add one, or raise its --slot-memory), or make the frame lighter (resolution, subdivision levels, ' +
        'texture sizes, Simplify), then requeue the job.',
      frame: oom.frame,
      peakBytes: peak || null,
      slotMemoryBytes: killedInBytes,
      largestSlotBytes: largestBytes,
      ...(oom.line ? { blenderLine: oom.line } : {}),
      lastLines: oom.lastLines,
    },
  }).failedReason;
}
