// The scheduling extension's rules, pure: a job's scheduling state from its render request, what
// every task of the job carries into the queue (priority and fair-share group), which frames are
// its previews, and the dependency checks (a cycle, a dependency that failed).
import { DEFAULT_PRIORITY, type JobScheduling, type SchedulingRequest } from '../../shared/api/scheduling.js';
import type { Job } from '../../shared/api/job.js';
import type { JobStatus } from '../../shared/job-status.js';
import type { NewTask } from './tasks.js';

/** The job's scheduling when its render is asked for: the request's choices over the defaults. */
export function initialScheduling(req: SchedulingRequest | undefined, waitingFor: readonly string[]): JobScheduling {
  return {
    priority: req?.priority ?? DEFAULT_PRIORITY,
    paused: false,
    dependsOn: [...new Set(req?.dependsOn ?? [])],
    waitingFor: [...waitingFor],
    // An approval gate needs previews to approve.
    previewFrames: (req?.previewFrames ?? true) || req?.approvePreviews === true,
    previews: req?.approvePreviews ? { frames: [], gate: 'waiting' } : null,
    ...(req?.requiredTags?.length ? { requiredTags: [...new Set(req.requiredTags)] } : {}),
  };
}

/**
 * The fair-share group of a job's tasks: its workspace, then its submitter. The job's `userId` is
 * the user of the API key that made it (keys of one person share it), so shares follow people, not
 * keys, and every task of the job, wherever it is enqueued, names the same group.
 */
export function shareGroupOf(job: Pick<Job, 'workspaceId' | 'userId'>): string {
  return `${job.workspaceId}/${job.userId}`;
}

/** What every enqueue of a job's task adds: the job's priority (the default before render) and group. */
export function taskScheduling(
  job: Pick<Job, 'workspaceId' | 'userId' | 'scheduling'>,
): Pick<NewTask, 'priority' | 'shareGroup'> {
  return { priority: job.scheduling?.priority ?? DEFAULT_PRIORITY, shareGroup: shareGroupOf(job) };
}

/** `task` as enqueued for `job`: with the job's priority and fair-share group. */
export function scheduled(task: NewTask, job: Pick<Job, 'workspaceId' | 'userId' | 'scheduling'>): NewTask {
  return { ...task, ...taskScheduling(job) };
}

/**
 * The preview frames of a render: its first, middle and last frames (of all it selects, so a
 * requeue previews the same frames), less those already kept or copied, which are done. Sorted.
 */
export function pickPreviewFrames(frames: readonly number[], kept: ReadonlySet<number>): number[] {
  if (frames.length === 0) return [];
  const picks = [frames[0]!, frames[Math.floor((frames.length - 1) / 2)]!, frames[frames.length - 1]!];
  return [...new Set(picks)].filter((f) => !kept.has(f)).sort((a, b) => a - b);
}

/** What a dependency's status means for the job waiting for it. */
export function dependencyOutcome(status: JobStatus | undefined): 'done' | 'failed' | 'waiting' {
  if (status === 'completed') return 'done';
  if (status === undefined || status === 'failed' || status === 'canceled') return 'failed';
  return 'waiting';
}

/**
 * The first path by which `jobId`'s dependencies lead back to it (`[jobId, ..., jobId]`), or
 * undefined. `dependsOn` reads a job's own dependencies (none for a job unknown or not rendering).
 */
export async function findCycle(
  jobId: string,
  deps: readonly string[],
  dependsOn: (id: string) => Promise<readonly string[]>,
): Promise<string[] | undefined> {
  const seen = new Set<string>();
  const walk = async (id: string, path: string[]): Promise<string[] | undefined> => {
    if (id === jobId) return [...path, id];
    if (seen.has(id)) return undefined;
    seen.add(id);
    for (const next of await dependsOn(id)) {
      const found = await walk(next, [...path, id]);
      if (found) return found;
    }
    return undefined;
  };
  for (const d of deps) {
    const found = await walk(d, [jobId]);
    if (found) return found;
  }
  return undefined;
}
