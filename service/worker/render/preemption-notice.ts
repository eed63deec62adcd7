// The job's preemption notice (Job.preemption, extension scheduling): a slot that hands a task
// back for a higher-priority job adds the task to it, and the slot that runs the task again takes
// it out. The next run of a listed task looks for its finished frames the way a retry does
// (handlers/render-frames.ts): they are in storage when frames are staged (stageFrames: every
// machine of a farm with shared storage, every remote worker), else in this machine's out/.
import type { Logger } from 'pino';
import type { PreemptionNotice } from '../../../shared/api/preemption.js';
import type { JobRecord, WorkerJobStore } from '../../ports/jobs.js';

/** Tries of a notice's read-then-write: two slots writing the same job's notice at once both land. */
const TRIES = 4;

export interface HandBack {
  taskId: string;
  priority: number;
  afterFrame: number | null;
  reason: string;
}

/** Whether `taskId` was handed back by a preemption and has not run since. */
export function wasHandedBack(rec: Pick<JobRecord, 'job'>, taskId: string): boolean {
  return rec.job.preemption?.tasks.includes(taskId) ?? false;
}

type Jobs = Pick<WorkerJobStore, 'getById' | 'update'>;

/**
 * Writes a change of the job's notice: read, write, read back until the change is seen (another
 * slot's write in between would be lost otherwise; each try starts from a fresh read).
 */
async function change(
  jobs: Jobs,
  jobId: string,
  next: (cur: PreemptionNotice | null) => PreemptionNotice | null,
  done: (cur: PreemptionNotice | null) => boolean,
): Promise<void> {
  for (let i = 0; i < TRIES; i++) {
    const rec = await jobs.getById(jobId);
    if (!rec) return;
    await jobs.update(jobId, { preemption: next(rec.job.preemption ?? null) });
    const after = await jobs.getById(jobId);
    if (!after || done(after.job.preemption ?? null)) return;
  }
}

/** Adds a hand-back to the job's notice, the latest reason shown. */
export async function noteHandBack(jobs: Jobs, jobId: string, h: HandBack, now: Date = new Date()): Promise<void> {
  const since = now.toISOString();
  await change(
    jobs,
    jobId,
    (cur) => ({
      reason: h.reason,
      priority: h.priority,
      afterFrame: h.afterFrame,
      since,
      tasks: [...(cur?.tasks ?? []).filter((t) => t !== h.taskId), h.taskId],
    }),
    (cur) => cur?.tasks.includes(h.taskId) ?? false,
  );
}

/** Takes a task that runs again out of the job's notice; the notice goes with its last task. Never throws. */
export async function clearHandBack(jobs: Jobs, jobId: string, taskId: string, log: Logger): Promise<void> {
  await change(
    jobs,
    jobId,
    (cur) => {
      const tasks = (cur?.tasks ?? []).filter((t) => t !== taskId);
      return cur && tasks.length > 0 ? { ...cur, tasks } : null;
    },
    (cur) => !cur?.tasks.includes(taskId),
  ).catch((err: unknown) => log.warn({ err, taskId }, 'the preemption notice of a task running again stays'));
}
