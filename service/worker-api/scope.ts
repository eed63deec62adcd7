// Which jobs a worker's token opens: those of tasks it holds a lease on now (a task whose lease
// owner id starts `<token name>:`), and ended jobs whose tasks it ran (the cleanup after a cancel
// or a failure: keeping finished frames, removing its working files). Any other job answers as
// one that does not exist, so a token learns nothing about other jobs or workspaces.
import { TERMINAL_STATUSES } from '../../shared/job-status.js';
import { ApiError } from '../http/api-error.js';
import type { JobRecord, JobRecords } from '../ports/jobs.js';
import type { TaskRunReader } from '../ports/tasks.js';
import type { WorkerIdentity } from './auth.js';

/** How far a requeue chain is followed for `via` reads (the worker's own limit, requeue-render.ts). */
const MAX_CHAIN = 10;

export function jobNotFound(id: string): ApiError {
  return new ApiError('JOB_NOT_FOUND', {
    message:
      'No job with this id among the jobs this worker holds a task of: it may have been deleted, its task ' +
      'may have gone to another worker (the lease ran out), or the worker talks to another deployment.',
    metadata: { jobId: id },
  });
}

export interface WorkerScopeDeps {
  jobs: Pick<JobRecords, 'getById'>;
  /** Who holds or ran each task of a job (the task queue). */
  tasks: TaskRunReader;
}

export class WorkerScope {
  constructor(private readonly deps: WorkerScopeDeps) {}

  /** The job, when `who` may act on it; else 404 JOB_NOT_FOUND. */
  async job(who: WorkerIdentity, id: string): Promise<JobRecord> {
    const rec = await this.deps.jobs.getById(id);
    if (!rec || !(await this.opens(who, rec))) throw jobNotFound(id);
    return rec;
  }

  /**
   * A job read for the job `via` the worker holds: allowed when `id` is in via's requeue chain, or
   * one of the jobs via's render waits for (extension scheduling: its planner reads their status).
   */
  async viaJob(who: WorkerIdentity, id: string, via: string): Promise<JobRecord> {
    const held = await this.job(who, via);
    if (held.job.scheduling?.dependsOn.includes(id)) {
      const dep = await this.deps.jobs.getById(id);
      if (dep && dep.job.workspaceId === held.job.workspaceId) return dep;
    }
    let link = held.internal.requeue?.fromJobId;
    for (let depth = 0; link && depth < MAX_CHAIN; depth++) {
      const rec = await this.deps.jobs.getById(link);
      if (!rec) break;
      if (link === id) return rec;
      link = rec.internal.requeue?.fromJobId;
    }
    throw jobNotFound(id);
  }

  private async opens(who: WorkerIdentity, rec: JobRecord): Promise<boolean> {
    // The deprecated farm-wide token is not scoped (see auth.ts).
    if (who.name === null) return true;
    const mine = `${who.name}:`;
    const runs = (await this.deps.tasks.jobTaskRuns(rec.job.id)).filter((r) => r.worker?.startsWith(mine));
    if (runs.some((r) => r.state === 'running')) return true;
    return runs.length > 0 && TERMINAL_STATUSES.has(rec.job.status);
  }
}
