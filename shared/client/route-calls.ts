// The typed calls of the spec's routes (uploads, jobs, progress, downloads): one method per entry
// of ROUTES, answers parsed with the route's response schema. The extensions' calls build on
// these in extension-calls.ts; the upload, wait and pagination helpers in client.ts.
import type { z } from 'zod';
import type { Job, JobList } from '../api/job.js';
import type { JobProgress } from '../api/progress.js';
import type { JobProgressWithEta } from '../api/frame-stats.js';
import type { Downloads } from '../api/downloads.js';
import type { UploadTarget } from '../api/upload.js';
import { IDEMPOTENT_REPLAY_HEADER } from '../constants.js';
import type { JobStatus } from '../job-status.js';
import { ROUTES, routePath, type RouteBody, type RouteName, type RouteResponse } from '../routes.js';
import { ApiError, ResponseFormatError } from './errors.js';
import { resolveOptions, type RenderJobClientOptions, type ResolvedOptions } from './options.js';
import { Transport, type ApiAnswer } from './transport.js';
import { sendOnce } from './recover.js';

/** Per-call options of every API method. */
export interface CallOptions {
  /** Aborts the call, its retries and back-off pauses; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Query of `listJobs`; the server applies the defaults (page 1, pageSize 20, every status). */
export interface ListJobsParams {
  /** 1-based page number. */
  page?: number;
  /** 1-100. */
  pageSize?: number;
  status?: JobStatus;
}

/** Answer of `renderJob`. */
export interface RenderResult {
  /** The job, with any extra keys the service added. */
  job: RouteResponse<'renderJob'>;
  /** True when a render had already been started: 200 with `X-Idempotent-Replay: true` rather than 202. */
  replay: boolean;
}

/**
 * The spec's calls, each answer parsed with the route's response schema. ExtensionCalls
 * (extension-calls.ts) adds the extensions' calls; RenderJobClient (client.ts) the uploads, waits
 * and pagination built on them.
 */
export class RouteCalls {
  protected readonly options: ResolvedOptions;
  protected readonly transport: Transport;

  constructor(options: RenderJobClientOptions) {
    this.options = resolveOptions(options);
    this.transport = new Transport(this.options);
  }

  /** `POST /uploads`: a presigned target to PUT the file to (see `uploadFile`, `uploadProject`). */
  createUpload(body: RouteBody<'createUpload'>, options?: CallOptions): Promise<UploadTarget> {
    return this.call('createUpload', { body, ...options });
  }

  /** `POST /jobs`: a job in `created`, from the slug of a completed upload. */
  async createJob(body: RouteBody<'createJob'>, options?: CallOptions): Promise<Job> {
    // A lost answer may have created the job (or the request never reached the service on a
    // stale pooled connection): a slug makes one job, so ask again and take the job the service
    // says this slug already made.
    let again = false;
    const send = async (): Promise<Job> => {
      try {
        return await this.call('createJob', { body, ...options });
      } catch (err) {
        const jobId =
          again && err instanceof ApiError && err.body.name === 'UPLOAD_ALREADY_USED'
            ? err.body.metadata['jobId']
            : undefined;
        if (typeof jobId === 'string') return this.getJob(jobId, options);
        throw err;
      } finally {
        again = true;
      }
    };
    return sendOnce(send, async () => undefined, this.recovery(options));
  }

  /** `GET /jobs`: one page of the workspace's jobs, with the pagination object. */
  listJobs(query: ListJobsParams = {}, options?: CallOptions): Promise<JobList> {
    return this.call('listJobs', {
      query: { page: query.page, pageSize: query.pageSize, status: query.status },
      ...options,
    });
  }

  /** `GET /jobs/{id}`: the job (unwrapped from `data`); `status` is the workflow signal. */
  async getJob(id: string, options?: CallOptions): Promise<Job> {
    return (await this.call('getJob', { id, ...options })).data;
  }

  /**
   * `POST /jobs/{id}/validate`: starts the asynchronous analysis; `{}` means the file's defaults.
   * After a lost connection, a job no longer `created` shows the validate was received (the spec
   * refuses a second one): that job is the answer.
   */
  validateJob(id: string, body: RouteBody<'validateJob'> = {}, options?: CallOptions): Promise<Job> {
    const received = async () => {
      const job = await this.getJob(id, options);
      return job.status === 'created' ? undefined : job;
    };
    return sendOnce(() => this.call('validateJob', { id, body, ...options }), received, this.recovery(options));
  }

  /** `POST /jobs/{id}/render`: starts the render of a validated job; a repeat call is a replay. */
  async renderJob(id: string, body: RouteBody<'renderJob'>, options?: CallOptions): Promise<RenderResult> {
    const answer = await this.transport.send({
      method: 'POST',
      path: routePath(ROUTES.renderJob.path, { id }),
      body,
      signal: options?.signal,
      retrySafe: true,
    });
    const job = parseAnswer('renderJob', answer);
    const header = answer.headers.get(IDEMPOTENT_REPLAY_HEADER)?.toLowerCase() === 'true';
    // A first start answers 202, so a 200 is a replay even if a proxy dropped the header.
    return { job, replay: header || answer.status === 200 };
  }

  /**
   * `POST /jobs/{id}/cancel`: cancels unfinished work; a finished job answers 409
   * CANCEL_NOT_ALLOWED. After a lost connection, a job found `canceled` is the answer.
   */
  cancelJob(id: string, options?: CallOptions): Promise<Job> {
    const received = async () => {
      const job = await this.getJob(id, options);
      return job.status === 'canceled' ? job : undefined;
    };
    return sendOnce(() => this.call('cancelJob', { id, ...options }), received, this.recovery(options));
  }

  private recovery(options?: CallOptions) {
    return {
      patienceMs: this.options.reconnectPatienceMs,
      answered: () => this.transport.answered(),
      signal: options?.signal,
    };
  }

  /**
   * `GET /jobs/{id}/progress`: frame counters (unwrapped from `data`), null until the render has
   * some; `etaBand` (the ETA with its band) from a service with the frame-stats extension.
   */
  async getJobProgress(id: string, options?: CallOptions): Promise<JobProgressWithEta> {
    return (await this.call('getJobProgress', { id, ...options })).data;
  }

  /** `GET /jobs/progress`: counters of every running job (unwrapped from `data`); [] when none runs. */
  async listProgress(options?: CallOptions): Promise<JobProgress[]> {
    return (await this.call('listProgress', { ...options })).data;
  }

  /** `GET /jobs/{id}/downloads`: signed, expiring URLs; see `collectOutputs`, `zipLinks`, `videoLinks`. */
  getDownloads(id: string, options?: CallOptions): Promise<Downloads> {
    return this.call('getDownloads', { id, ...options });
  }

  protected async call<N extends Exclude<RouteName, 'renderJob'>>(
    name: N,
    args: {
      id?: string;
      body?: unknown;
      query?: Record<string, string | number | undefined>;
      signal?: AbortSignal | undefined;
    },
  ): Promise<RouteResponse<N>> {
    const route = ROUTES[name];
    const path = routePath(route.path, args.id === undefined ? {} : { id: args.id });
    const retrySafe = 'retrySafe' in route && route.retrySafe === true;
    const answer = await this.transport.send({
      method: route.method,
      path,
      query: args.query,
      body: args.body,
      signal: args.signal,
      retrySafe,
    });
    return parseAnswer(name, answer);
  }
}

/** Parses a 2xx answer with the schema the route lists for its status (the usual one otherwise). */
export function parseAnswer<N extends RouteName>(name: N, answer: ApiAnswer): RouteResponse<N> {
  const responses: Readonly<Record<number, z.ZodType>> = ROUTES[name].responses;
  const schema = responses[answer.status] ?? Object.values(responses)[0];
  if (!schema) throw new Error(`route ${name} lists no response schema`);
  const parsed = schema.safeParse(answer.data);
  if (!parsed.success) throw new ResponseFormatError(ROUTES[name].method, answer.url, answer.status, parsed.error);
  return parsed.data as RouteResponse<N>;
}
