// The `estimate` step of a submission (mode `estimate`): the service's estimate (extension
// estimate) of the render the submission's settings ask for, on the job once `validated`, followed
// until it is ready. The job stays validated: a later submission `{jobId, settings}` with the same
// settings renders it, and the service keeps the sampled frames. A job already uploaded is reused
// here too (`jobId`): neither an estimate nor its render uploads the project again.
import type { Estimate } from '../../shared/api/estimate.js';
import type { Job } from '../../shared/api/job.js';
import type { RequestedRenderConfig } from '../../shared/api/render-config.js';
import type { RenderJobClient } from '../../shared/client/client.js';
import type { Submission } from '../../shared/daemon/submission-schemas.js';
import { DaemonError } from '../errors.js';

export interface EstimateStepOptions {
  signal?: AbortSignal;
  /** Pause between two reads of GET /jobs/{id}/estimate while it samples. */
  pollMs: number;
}

/** The job of a `{jobId}` submission once it is `validated` (waited for while it validates). */
export async function reusedJob(client: RenderJobClient, jobId: string, options: EstimateStepOptions): Promise<Job> {
  const job = await client.getJob(jobId, { signal: options.signal });
  // Any other status reaches the service as it is: its RENDER_NOT_ALLOWED / ESTIMATE_NOT_ALLOWED say what to do.
  if (job.status !== 'created' && job.status !== 'validating') return job;
  return client.waitForStatus(jobId, ['validated'], { intervalMs: options.pollMs, signal: options.signal });
}

/**
 * Starts (or joins: the service answers a repeated request with the same estimate) the job's
 * estimate of `requested` and follows it, telling `update` each change; resolves with the ready
 * estimate. A failed one throws ESTIMATE_FAILED with the service's one-sentence reason, a canceled
 * one ESTIMATE_CANCELED, a service without the extension ESTIMATE_NOT_OFFERED.
 */
export async function estimateStep(
  client: RenderJobClient,
  jobId: string,
  requested: RequestedRenderConfig,
  update: (patch: Partial<Submission>) => void,
  options: EstimateStepOptions,
): Promise<Estimate> {
  const { signal } = options;
  if (!(await client.hasExtension('estimate', { signal })))
    throw new DaemonError('ESTIMATE_NOT_OFFERED', undefined, { jobId });
  let estimate = (await client.startEstimate(jobId, { requestedRenderConfig: requested }, { signal })).estimate;
  update({ step: 'estimating', estimate });
  while (estimate.state === 'sampling') {
    await pause(options.pollMs, signal);
    const next = await client.getEstimate(jobId, { signal });
    if (JSON.stringify(next) !== JSON.stringify(estimate)) update({ estimate: next });
    estimate = next;
  }
  if (estimate.state === 'failed')
    throw new DaemonError(
      'ESTIMATE_FAILED',
      `${estimate.reason ?? 'The farm could not estimate this render.'} The job stays validated: fix that ` +
        `and estimate again, or render without an estimate.`,
      { jobId },
    );
  if (estimate.state === 'canceled')
    throw new DaemonError(
      'ESTIMATE_CANCELED',
      `The estimate of job ${jobId} was canceled before it was ready; the job stays validated: estimate it ` +
        `again, or render it.`,
      { jobId },
    );
  return estimate;
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
