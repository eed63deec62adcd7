// A render that names jobs to wait for (extension scheduling, `dependsOn`) is planned only once
// every one of them has completed. Its planning task itself waits: it is handed back to the queue
// naming the jobs it waits for, and the queue makes it claimable again the moment one of them ends
// (ports/dependency-waits.ts). The wait lives in the queue's durable state, so a restart of the
// service or of every worker loses no waiting job.
import { dependencyOutcome } from '../../domain/scheduling.js';
import type { JobRecord, WorkerJobStore } from '../../ports/jobs.js';
import { DeferTaskError, FatalTaskError } from '../runtime/outcomes.js';

/**
 * The safety net: how long a waiting planning task stays out of the queue when no dependency's
 * end wakes it first. The wake is what a chain of jobs runs on; this look only makes up for a
 * wake that was lost (the service died between a job's end and the wake, or Redis did not answer).
 */
export const DEPENDENCY_SAFETY_POLL_MS = 30_000;

/**
 * Returns when nothing is left to wait for. Throws DeferTaskError naming the dependencies that
 * have not completed (recording them too, for GET /jobs/{id}), and FatalTaskError
 * DEPENDENCY_FAILED, naming it, once one failed, was canceled or is gone.
 */
export async function awaitDependencies(
  jobs: Pick<WorkerJobStore, 'getById' | 'setSchedulingFields'>,
  rec: JobRecord,
  pollMs = DEPENDENCY_SAFETY_POLL_MS,
): Promise<void> {
  const s = rec.job.scheduling;
  if (!s || s.waitingFor.length === 0) return;
  const still: string[] = [];
  for (const id of s.waitingFor) {
    // `via`: a remote worker's token opens a dependency only through the job it holds.
    const dep = await jobs.getById(id, { via: rec.job.id });
    const status = dep?.job.status;
    const outcome = dependencyOutcome(status);
    if (outcome === 'failed') {
      throw FatalTaskError.render(
        'DEPENDENCY_FAILED',
        `Job ${id}, which this render waits for, ${status ? `is ${status}` : 'no longer exists'}: its outputs ` +
          'will never come. Requeue it and render this job again with the new one in dependsOn, or without it.',
        { dependencyId: id, dependencyStatus: status ?? null },
      );
    }
    if (outcome === 'waiting') still.push(id);
  }
  // Only this field: a priority or pause set since `rec` was read stays (JobRecords.setSchedulingFields).
  if (still.length !== s.waitingFor.length) await jobs.setSchedulingFields?.(rec.job.id, { waitingFor: still });
  if (still.length > 0) throw new DeferTaskError(pollMs, `waiting for ${still.join(', ')}`, still);
}
