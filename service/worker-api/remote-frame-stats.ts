// Frame statistics of a worker on another machine: each finished frame goes to the service's
// worker API (frame-routes.ts), which stores it. Retried like the job store's writes: a repeated
// report replaces its row.
import type { FrameStat, FrameStatsWriter } from '../ports/frame-stats.js';
import { WorkerApiClient, WorkerApiError, type WorkerApiClientOptions } from './client.js';
import { frameReportPath } from './frame-routes.js';

export class RemoteFrameStats implements FrameStatsWriter {
  private readonly api: WorkerApiClient;

  /**
   * Same options as the worker's job store; retryForMs defaults to 10000 ms: a statistic is worth less than a frame.
   */
  constructor(opts: WorkerApiClientOptions) {
    this.api = new WorkerApiClient({ retryForMs: 10_000, ...opts });
  }

  async recordFrames(stats: readonly FrameStat[]): Promise<void> {
    const byJob = new Map<string, FrameStat[]>();
    for (const s of stats) byJob.set(s.jobId, [...(byJob.get(s.jobId) ?? []), s]);
    for (const [jobId, frames] of byJob) {
      const path = frameReportPath(jobId);
      const a = await this.api.call('POST', path, { frames });
      if (a.status === 204) continue;
      if (a.status >= 400) throw this.api.refusal(a, 'POST', path);
      throw new WorkerApiError(
        `${a.url} answered POST ${path} with ${a.status}, expected 204: run the same renderbridge version on ` +
          `service and workers.`,
        a.status,
        null,
      );
    }
  }
}
