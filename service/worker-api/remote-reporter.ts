// The heartbeat of a worker on another machine (extension workers): its reports go to the
// service's internal worker API, which stamps and stores them in the worker registry.
import type { WorkerReport, WorkerReporter } from '../ports/workers.js';
import { WorkerApiClient, WorkerApiError, type WorkerApiClientOptions } from './client.js';
import { WORKER_API_PREFIX, WORKER_ROUTES } from './contract.js';

export class RemoteWorkerReporter implements WorkerReporter {
  private readonly api: WorkerApiClient;

  /** Same options as the worker's job store; retryForMs defaults to 2000 ms: the next heartbeat is the retry. */
  constructor(opts: WorkerApiClientOptions) {
    this.api = new WorkerApiClient({ retryForMs: 2000, ...opts });
  }

  async report(report: WorkerReport): Promise<void> {
    const path = `${WORKER_API_PREFIX}${WORKER_ROUTES.heartbeat.path}`;
    const a = await this.api.call('POST', path, report);
    if (a.status === 204) return;
    if (a.status >= 400) throw this.api.refusal(a, 'POST', path);
    throw new WorkerApiError(
      `${a.url} answered POST ${path} with ${a.status}, expected 204: run the same renderbridge version on ` +
        `service and workers.`,
      a.status,
      null,
    );
  }
}
