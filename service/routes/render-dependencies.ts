// The checks a render with `dependsOn` (extension scheduling) passes before it is accepted: every
// job named is one of the workspace's (another workspace's job answers exactly as an unknown id
// does, so nothing leaks), none has failed or been canceled, and none waits, directly or through
// others, for this job. What is left is the list the job waits for.
import { dependencyOutcome, findCycle } from '../domain/scheduling.js';
import { ApiError } from '../http/api-error.js';
import type { JobRecords } from '../ports/jobs.js';

/** The jobs of `dependsOn` not completed yet, or an ApiError saying why the render cannot wait for them. */
export async function checkDependencies(
  jobs: Pick<JobRecords, 'get'>,
  job: { id: string; workspaceId: string },
  dependsOn: readonly string[],
): Promise<string[]> {
  const waitingFor: string[] = [];
  for (const id of dependsOn) {
    const dep = id === job.id ? undefined : await jobs.get(job.workspaceId, id);
    if (id === job.id) throw new ApiError('DEPENDENCY_CYCLE', { metadata: { jobId: job.id, cycle: [job.id, id] } });
    if (!dep) throw new ApiError('DEPENDENCY_NOT_FOUND', { metadata: { jobId: job.id, dependencyId: id } });
    const outcome = dependencyOutcome(dep.job.status);
    if (outcome === 'failed') {
      throw new ApiError('DEPENDENCY_FAILED', {
        metadata: { jobId: job.id, dependencyId: id, dependencyStatus: dep.job.status },
      });
    }
    if (outcome === 'waiting') waitingFor.push(id);
  }
  // Only jobs of this workspace are followed: a cycle can only run through jobs this key may name.
  const cycle = await findCycle(
    job.id,
    dependsOn,
    async (id) => (await jobs.get(job.workspaceId, id))?.job.scheduling?.dependsOn ?? [],
  );
  if (cycle) throw new ApiError('DEPENDENCY_CYCLE', { metadata: { jobId: job.id, cycle } });
  return waitingFor;
}
