// The typed calls of the v1 API: one method per entry of ROUTES, answers parsed with the route's
// response schema. The upload, wait and pagination helpers built on them: client.ts.
import type { z } from 'zod';
import type { Job, JobList } from '../api/job.js';
import type { JobProgress } from '../api/progress.js';
import type { FrameStatsPage, JobProgressWithEta } from '../api/frame-stats.js';
import { THUMBNAIL_FRAME_HEADER, type ThumbnailList } from '../api/thumbnails.js';
import type { Downloads } from '../api/downloads.js';
import type { UploadState, UploadTarget } from '../api/upload.js';
import type { BlobQueryResult, CommittedUpload } from '../api/blob-upload.js';
import type { Extension, ExtensionName } from '../extensions.js';
import { IDEMPOTENT_REPLAY_HEADER } from '../constants.js';
import type { JobStatus } from '../job-status.js';
import { ROUTES, routePath, type RouteBody, type RouteName, type RouteResponse } from '../routes.js';
import { ApiError, ResponseFormatError } from './errors.js';
import { resolveOptions, type RenderJobClientOptions, type ResolvedOptions } from './options.js';
import { Transport, type ApiAnswer } from './transport.js';
import { sendOnce } from './recover.js';
import type { Estimate } from '../api/estimate.js';

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

/** Query of `listJobFrames` and `listJobThumbnails`; the server applies the defaults (page 1, pageSize 500 and 200). */
export interface ListJobFramesParams {
  /** 1-based page number. */
  page?: number;
  /** 1-1000 (FRAME_STATS_MAX_PAGE_SIZE). */
  pageSize?: number;
}

/** Answer of `renderJob`. */
export interface RenderResult {
  /** The job, with any extra keys the service added. */
  job: RouteResponse<'renderJob'>;
  /** True when a render had already been started: 200 with `X-Idempotent-Replay: true` rather than 202. */
  replay: boolean;
}

/**
 * The API's calls, one method per entry of ROUTES, each answer parsed with the route's response
 * schema. RenderJobClient (client.ts) adds the uploads, waits and pagination built on them.
 */
export class RouteCalls {
  protected readonly options: ResolvedOptions;
  private readonly transport: Transport;
  /** GET /extensions answers once per client: what a service offers does not change under it. */
  private extensionList: Promise<Extension[]> | undefined;

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

  /**
   * `GET /extensions`: what this service offers beyond the spec. A spec-only service has no such
   * route: its 404 (or 405), whatever the body, means none. Asked once per client (a failed ask,
   * such as a network error or a 401, is asked again next time).
   */
  extensions(options?: CallOptions): Promise<Extension[]> {
    this.extensionList ??= this.call('getExtensions', { ...options }).then(
      (answer) => answer.data.extensions,
      (err: unknown) => {
        if (err instanceof ApiError && (err.status === 404 || err.status === 405)) return [];
        this.extensionList = undefined;
        throw err;
      },
    );
    return this.extensionList;
  }

  /** True when the service offers the extension (in version 1, the one this client speaks). */
  async hasExtension(name: ExtensionName, options?: CallOptions): Promise<boolean> {
    return (await this.extensions(options)).some((e) => e.name === name && e.version === 1);
  }

  /**
   * `GET /jobs/{id}/logs` (extension task-logs; see `hasExtension`): the job's task logs as text,
   * yielded as it arrives. With `follow: true` the stream stays open and brings new lines until
   * the job has ended; abort `signal` to stop earlier.
   */
  async *jobLogs(
    id: string,
    query: { task?: string; attempt?: number; follow?: boolean } = {},
    options?: CallOptions,
  ): AsyncGenerator<string> {
    const { body } = await this.transport.stream({
      method: 'GET',
      path: routePath(ROUTES.getJobLogs.path, { id }),
      query: { task: query.task, attempt: query.attempt, follow: query.follow ? 'true' : undefined },
      signal: options?.signal,
    });
    const decoder = new TextDecoder();
    for await (const chunk of body) {
      const text = decoder.decode(chunk, { stream: true });
      if (text) yield text;
    }
    const rest = decoder.decode();
    if (rest) yield rest;
  }

  /** `GET /jobs/{id}/logs/index` (extension task-logs): each task with its attempts' logs (worker, state, sizes). */
  async jobLogIndex(
    id: string,
    query: { task?: string } = {},
    options?: CallOptions,
  ): Promise<RouteResponse<'getJobLogIndex'>['data']> {
    return (await this.call('getJobLogIndex', { id, query, ...options })).data;
  }

  /**
   * `POST /jobs/{id}/requeue` (extension job-requeue; see `hasExtension`): a new job from a failed
   * or canceled job's stored project, or a completed job's `frames` rendered again. Resolves with
   * the new job; `replay` is true when the service had made it for an earlier identical request.
   */
  async requeueJob(
    id: string,
    body: RouteBody<'requeueJob'> = {},
    options?: CallOptions,
  ): Promise<{ job: Job; replay: boolean }> {
    const answer = await this.transport.send({
      method: 'POST',
      path: routePath(ROUTES.requeueJob.path, { id }),
      body,
      signal: options?.signal,
      retrySafe: true,
    });
    return { job: parseAnswer('requeueJob', answer), replay: answer.status === 200 };
  }

  /** `GET /jobs/{id}/lineage` (extension job-requeue): the job it was requeued from and the jobs requeued from it. */
  async getJobLineage(id: string, options?: CallOptions): Promise<RouteResponse<'getJobLineage'>['data']> {
    return (await this.call('getJobLineage', { id, ...options })).data;
  }

  /**
   * `GET /jobs/{id}/frames` (extension frame-stats; see `hasExtension`): one page of the job's
   * per-frame statistics in frame order (`pageSize` at most 1000, default 500), with the summary
   * of every frame and the live ETA band, and the pagination object.
   */
  listJobFrames(id: string, query: ListJobFramesParams = {}, options?: CallOptions): Promise<FrameStatsPage> {
    return this.call('listJobFrames', { id, query: { page: query.page, pageSize: query.pageSize }, ...options });
  }

  /**
   * `GET /jobs/{id}/thumbnails` (extension frame-thumbnails; see `hasExtension`): one page of the
   * job's frame thumbnails in frame order (`pageSize` at most 1000, default 200), each with a signed
   * URL, the latest finished frame's and the shot's fps, and the pagination object.
   */
  listJobThumbnails(id: string, query: ListJobFramesParams = {}, options?: CallOptions): Promise<ThumbnailList> {
    return this.call('listJobThumbnails', { id, query: { page: query.page, pageSize: query.pageSize }, ...options });
  }

  /**
   * `GET /jobs/{id}/thumbnails/image` (extension frame-thumbnails): the image of `frame`'s
   * thumbnail, or of the frame that finished last, as it arrives: its media type, the frame it
   * shows and the bytes. A frame without one is ApiError THUMBNAIL_NOT_FOUND (404).
   */
  async jobThumbnail(
    id: string,
    query: { frame?: number } = {},
    options?: CallOptions,
  ): Promise<{ contentType: string; frame: number; body: ReadableStream<Uint8Array> }> {
    const { body, headers } = await this.transport.stream({
      method: 'GET',
      path: routePath(ROUTES.getJobThumbnail.path, { id }),
      query: { frame: query.frame },
      accept: 'image/*, application/json',
      signal: options?.signal,
    });
    const frame = Number(headers.get(THUMBNAIL_FRAME_HEADER) ?? query.frame ?? NaN);
    return { contentType: headers.get('content-type') ?? 'application/octet-stream', frame, body };
  }

  /**
   * `POST /jobs/{id}/estimate` (extension estimate): starts the estimate of a validated job with
   * the render's own body; `replay` is true when it answers the estimate of an earlier identical request.
   */
  async startEstimate(
    id: string,
    body: RouteBody<'startEstimate'>,
    options?: CallOptions,
  ): Promise<{ estimate: Estimate; replay: boolean }> {
    const answer = await this.transport.send({
      method: 'POST',
      path: routePath(ROUTES.startEstimate.path, { id }),
      body,
      signal: options?.signal,
      retrySafe: true,
    });
    return { estimate: parseAnswer('startEstimate', answer).data, replay: answer.status === 200 };
  }

  /** `GET /jobs/{id}/estimate` (extension estimate): the job's estimate, its figures refined as frames finish. */
  async getEstimate(id: string, options?: CallOptions): Promise<Estimate> {
    return (await this.call('getEstimate', { id, ...options })).data;
  }

  /** `DELETE /jobs/{id}/estimate` (extension estimate): cancels an estimate that samples. */
  async cancelEstimate(id: string, options?: CallOptions): Promise<Estimate> {
    return (await this.call('cancelEstimate', { id, ...options })).data;
  }

  /** `GET /workers` (extension workers; see `hasExtension`): the farm's workers and the queue's open tasks by kind. */
  async listWorkers(options?: CallOptions): Promise<RouteResponse<'listWorkers'>['data']> {
    return (await this.call('listWorkers', { ...options })).data;
  }

  /**
   * `GET /uploads/{slug}` (extension resumable-uploads; see `hasExtension`): how many bytes of the
   * upload's PUT the service holds, and whether the file is complete.
   */
  async getUpload(slug: string, options?: CallOptions): Promise<UploadState> {
    const answer = await this.transport.send({
      method: 'GET',
      path: routePath(ROUTES.getUpload.path, { slug }),
      signal: options?.signal,
      retrySafe: true,
    });
    return parseAnswer('getUpload', answer).data;
  }

  /** `POST /uploads/blobs/query` (extension content-addressed-uploads): which blobs to send, with part URLs. */
  queryBlobs(body: RouteBody<'queryBlobs'>, options?: CallOptions): Promise<BlobQueryResult> {
    return this.call('queryBlobs', { body, ...options });
  }

  /** `POST /uploads/commit` (extension content-addressed-uploads): the project over held blobs -> an upload slug. */
  commitUpload(body: RouteBody<'commitUpload'>, options?: CallOptions): Promise<CommittedUpload> {
    return this.call('commitUpload', { body, ...options });
  }

  private async call<N extends Exclude<RouteName, 'renderJob'>>(
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
function parseAnswer<N extends RouteName>(name: N, answer: ApiAnswer): RouteResponse<N> {
  const responses: Readonly<Record<number, z.ZodType>> = ROUTES[name].responses;
  const schema = responses[answer.status] ?? Object.values(responses)[0];
  if (!schema) throw new Error(`route ${name} lists no response schema`);
  const parsed = schema.safeParse(answer.data);
  if (!parsed.success) throw new ResponseFormatError(ROUTES[name].method, answer.url, answer.status, parsed.error);
  return parsed.data as RouteResponse<N>;
}
