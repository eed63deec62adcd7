// The job store of a worker on another machine: every read and write goes to the service's
// internal worker API (service/worker-api), so only the service writes job state. Several
// service URLs give failover; see WorkerApiClient for the retry rules.
import type { z } from 'zod';
import type { JobProgress } from '../../shared/api/progress.js';
import type { JobStatus } from '../../shared/job-status.js';
import type { PreviewGate } from '../../shared/api/scheduling.js';
import type { JobInternal, JobPatch, JobRecord, SchedulingFields, WorkerJobStore } from '../ports/jobs.js';
import { WorkerApiClient, WorkerApiError, type WorkerApiAnswer, type WorkerApiClientOptions } from './client.js';
import {
  JobRecordWire,
  MaybeRecordEnvelope,
  WhoamiAnswer,
  WORKER_API_PREFIX,
  WORKER_ROUTES,
  workerApiPath,
  type PreviewGateBody,
  type TransitionBody,
} from './contract.js';

/** See WorkerApiClientOptions: serviceUrls, token, timeoutMs (default 10000), retryForMs (default 30000), fetch. */
export type RemoteWorkerJobsOptions = WorkerApiClientOptions;

export class RemoteWorkerJobs implements WorkerJobStore {
  private readonly api: WorkerApiClient;

  constructor(opts: RemoteWorkerJobsOptions) {
    this.api = new WorkerApiClient(opts);
  }

  /** Undefined also for a job this worker holds no task of: the service answers it as missing. */
  async getById(id: string, opts: { via?: string } = {}): Promise<JobRecord | undefined> {
    const via = opts.via && opts.via !== id ? `?via=${encodeURIComponent(opts.via)}` : '';
    const path = `${workerApiPath('getJob', id)}${via}`;
    const a = await this.api.call('GET', path);
    if (isJobNotFound(a)) return undefined;
    return toRecord(this.expect(a, 'GET', path, 200, JobRecordWire));
  }

  /**
   * Compare-and-set through the service. Retrying after a lost answer is safe: if the first
   * attempt was applied, the repeated one finds the status already moved and writes nothing
   * (null), never a second move. Only then is the outcome ambiguous ("moved by me" or "moved
   * by someone else"), so the job is read again: already at `to` counts as done (the record is
   * returned); anywhere else, the move did not happen (undefined), as with the local store.
   */
  async transition(
    id: string,
    from: readonly JobStatus[],
    to: JobStatus,
    patch?: JobPatch,
    internal?: Partial<JobInternal>,
  ): Promise<JobRecord | undefined> {
    const path = workerApiPath('transition', id);
    // The service checks internal against its strict schema (WorkerInternalWire): typed here as the store types it.
    const body = {
      from: [...from],
      to,
      ...(patch ? { patch } : {}),
      ...(internal ? { internal } : {}),
    } as TransitionBody;
    const a = await this.api.call('POST', path, body);
    // As with the local store, a job that is not there (or not this worker's) is a move that did not happen.
    if (isJobNotFound(a)) return undefined;
    const moved = toRecord(this.expect(a, 'POST', path, 200, MaybeRecordEnvelope).data);
    if (moved || !a.uncertain) return moved;
    const now = await this.getById(id);
    return now?.job.status === to ? now : undefined;
  }

  /** A merge of fields: applying it twice leaves the same job, so a retried update is harmless. */
  async update(id: string, patch: JobPatch, internal?: Partial<JobInternal>): Promise<JobRecord | undefined> {
    const path = workerApiPath('update', id);
    const a = await this.api.call('POST', path, { patch, ...(internal ? { internal } : {}) });
    if (isJobNotFound(a)) return undefined;
    return toRecord(this.expect(a, 'POST', path, 200, MaybeRecordEnvelope).data);
  }

  /**
   * The approval gate's compare-and-set through the service. A lost answer is settled as transition
   * settles it: the job read again, and the gate already at `to` counts as done.
   */
  async setPreviewGate(
    id: string,
    from: readonly PreviewGate[],
    to: { gate: PreviewGate; frames?: number[] },
    internal?: Partial<JobInternal>,
  ): Promise<JobRecord | undefined> {
    const path = workerApiPath('previewGate', id);
    const body = { from: [...from], to, ...(internal ? { internal } : {}) } as PreviewGateBody;
    const a = await this.api.call('POST', path, body);
    if (isJobNotFound(a)) return undefined;
    const moved = toRecord(this.expect(a, 'POST', path, 200, MaybeRecordEnvelope).data);
    if (moved || !a.uncertain) return moved;
    const now = await this.getById(id);
    return now?.job.scheduling?.previews?.gate === to.gate ? now : undefined;
  }

  /** Sets fields to values, so a retried write after a lost answer is harmless, as with update. */
  async setSchedulingFields(id: string, fields: SchedulingFields): Promise<JobRecord | undefined> {
    const path = workerApiPath('scheduling', id);
    const a = await this.api.call('POST', path, fields);
    if (isJobNotFound(a)) return undefined;
    return toRecord(this.expect(a, 'POST', path, 200, MaybeRecordEnvelope).data);
  }

  async setProgress(p: JobProgress): Promise<void> {
    const path = workerApiPath('progress', p.jobId);
    this.expect(await this.api.call('PUT', path, p), 'PUT', path, 204);
  }

  /** The worker name the token identifies (null: the deprecated farm-wide token, which names none). */
  async whoami(): Promise<string | null> {
    const path = `${WORKER_API_PREFIX}${WORKER_ROUTES.whoami.path}`;
    return this.expect(await this.api.call('GET', path), 'GET', path, 200, WhoamiAnswer).name;
  }

  /**
   * Reports the job completed: the service enqueues its onRenderComplete webhook (once, however often this is called).
   */
  async completed(rec: JobRecord): Promise<void> {
    const path = workerApiPath('completed', rec.job.id);
    this.expect(await this.api.call('POST', path), 'POST', path, 204);
  }

  /** The answer's body as `schema` when it has the expected status; otherwise the service's refusal. */
  private expect(a: WorkerApiAnswer, method: string, path: string, status: number): void;
  private expect<S extends z.ZodType>(
    a: WorkerApiAnswer,
    method: string,
    path: string,
    status: number,
    schema: S,
  ): z.infer<S>;
  private expect(a: WorkerApiAnswer, method: string, path: string, status: number, schema?: z.ZodType): unknown {
    if (a.status !== status) {
      if (a.status >= 400) throw this.api.refusal(a, method, path);
      throw new WorkerApiError(
        `${a.url} answered ${method} ${path} with ${a.status}, expected ${status}: run the same renderbridge ` +
          `version on service and workers.`,
        a.status,
        null,
      );
    }
    if (!schema) return undefined;
    return this.api.parse(a, method, path, schema);
  }
}

/** `internal` is opaque on the wire (a JSON object the service itself wrote): typed as the store types it. */
function toRecord(wire: z.infer<typeof JobRecordWire> | null): JobRecord | undefined {
  return wire ? (wire as unknown as JobRecord) : undefined;
}

/** The service's answer for a job that does not exist, or that this worker's token does not open. */
function isJobNotFound(a: WorkerApiAnswer): boolean {
  const b = a.body as { name?: unknown } | undefined;
  return a.status === 404 && b?.name === 'JOB_NOT_FOUND';
}
