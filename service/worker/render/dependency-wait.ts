// A render that names jobs to wait for (extension scheduling, `dependsOn`) is planned only once
// every one of them has completed. Its planning task itself waits: it is handed back to the queue
// and claimed again a moment later, so the wait lives in the queue's durable state and a restart
// of the service or of every worker loses no waiting job.
import { dependencyOutcome } from '../../domain/scheduling.js';
import type { JobRecord, WorkerJobStore } from '../../ports/jobs.js';
import { DeferTaskError, FatalTaskError } from '../runtime/outcomes.js';

/**
 * How long a waiting planning task stays out of the queue between looks. A second: a chain of
 * jobs loses at most about that much between links, and a look is a claim and a read per job.
 */
export const DEPENDENCY_POLL_MS = 1000;

/**
 * Returns when nothing is left to wait for. Throws DeferTaskError while a dependency has not
 * completed (recording which still hold the job back, for GET /jobs/{id}), and FatalTaskError
 * DEPENDENCY_FAILED, naming it, once one failed, was canceled or is gone.
 */
export async function awaitDependencies(
  jobs: Pick<WorkerJobStore, 'getById' | 'update'>,
  rec: JobRecord,
  pollMs = DEPENDENCY_POLL_MS,
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
  if (still.length !== s.waitingFor.length) await jobs.update(rec.job.id, { scheduling: { ...s, waitingFor: still } });
  if (still.length > 0) throw new DeferTaskError(pollMs, `waiting for ${still.join(', ')}`);
}
