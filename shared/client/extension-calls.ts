// The typed calls of the extensions' routes (see `hasExtension`): task logs, requeue, frame stats,
// thumbnails, estimates, workers, resumable and content-addressed uploads. They sit on the spec's
// calls (route-calls.ts); RenderJobClient (client.ts) builds its helpers on both.
import type { Job } from '../api/job.js';
import type { FrameStatsPage } from '../api/frame-stats.js';
import { THUMBNAIL_FRAME_HEADER, type ThumbnailList } from '../api/thumbnails.js';
import type { UploadState } from '../api/upload.js';
import type { BlobQueryResult, CommittedUpload } from '../api/blob-upload.js';
import type { Estimate } from '../api/estimate.js';
import type { Extension, ExtensionName } from '../extensions.js';
import { ROUTES, routePath, type RouteBody, type RouteResponse } from '../routes.js';
import { ApiError } from './errors.js';
import { parseAnswer, RouteCalls, type CallOptions } from './route-calls.js';

/** Query of `listJobFrames` and `listJobThumbnails`; the server applies the defaults (page 1, pageSize 500 and 200). */
export interface ListJobFramesParams {
  /** 1-based page number. */
  page?: number;
  /** 1-1000 (FRAME_STATS_MAX_PAGE_SIZE). */
  pageSize?: number;
}

/** The extensions' calls, on top of the spec's. */
export class ExtensionCalls extends RouteCalls {
  /** GET /extensions answers once per client: what a service offers does not change under it. */
  private extensionList: Promise<Extension[]> | undefined;

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
}
