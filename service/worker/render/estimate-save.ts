// Writes what an estimate's worker measured into the job's estimate state (extension estimate),
// but only while that estimate still samples: a cancel, or a new estimate of another request,
// replaced it meanwhile and must not be overwritten by a run that is ending.
import type { EstimateInternal } from '../../domain/estimate-state.js';
import type { WorkerJobStore } from '../../ports/jobs.js';

/** Writes the estimate's state unless it was canceled (or replaced) meanwhile; false when it was. */
export async function saveEstimate(
  jobs: Pick<WorkerJobStore, 'getById' | 'update'>,
  jobId: string,
  startedAt: string,
  patch: Partial<EstimateInternal>,
): Promise<boolean> {
  const now = await jobs.getById(jobId);
  const est = now?.internal.estimate;
  if (!now || !est || est.startedAt !== startedAt || est.state !== 'sampling') return false;
  await jobs.update(jobId, {}, { estimate: { ...est, ...patch } });
  return true;
}
