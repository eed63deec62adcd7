// The typed client of the v1 API: the calls of RouteCalls (route-calls.ts), ExtensionCalls
// (extension-calls.ts) and SchedulingCalls (scheduling-calls.ts), one per entry of ROUTES, plus the
// upload, wait and pagination helpers built on them.
import { basename } from 'node:path';
import type { Job } from '../api/job.js';
import type { FileType, UploadTarget } from '../api/upload.js';
import { CONTENT_TYPES } from '../api/upload.js';
import type { JobStatus } from '../job-status.js';
import type { RouteBody } from '../routes.js';
import { fileTypeFor, uploadFile, type UploadFileOptions, type UploadResult } from './upload.js';
import { singlePutUpload, type UploadRetry } from './single-put.js';
import { uploadBlobs, type ProjectFile, type UploadBlobsOptions, type UploadBlobsResult } from './blob-upload.js';
import { SchedulingCalls } from './scheduling-calls.js';
import type { CallOptions, ListJobsParams } from './route-calls.js';
import { waitForStatus, type WaitOptions } from './wait.js';

export interface UploadProjectOptions {
  /** Default: from the extension (.blend or .zip). */
  fileType?: FileType;
  /** Bytes handed to the socket; starts again from 0 when the PUT is sent again. */
  onProgress?: UploadFileOptions['onProgress'];
  /** Told before the PUT is sent again (after a network error, or to a new target). */
  onRetry?: (retry: UploadRetry) => void;
  signal?: AbortSignal;
  /**
   * A retry asks for a new upload target (POST /uploads) when less than this is left before the
   * target's `expiresAt`, ms. Default 60000.
   */
  renewMarginMs?: number;
}

export class RenderJobClient extends SchedulingCalls {
  /**
   * Uploads a project as blobs (extension content-addressed-uploads; see `hasExtension`): only
   * what the workspace lacks is sent; resolves with the committed upload (use its `slug`).
   */
  uploadBlobs(files: readonly ProjectFile[], options: UploadBlobsOptions): Promise<UploadBlobsResult> {
    return uploadBlobs(this, files, {
      reconnectPatienceMs: this.options.reconnectPatienceMs,
      baseDelayMs: this.options.baseDelayMs,
      maxDelayMs: this.options.maxDelayMs,
      idleTimeoutMs: this.options.requestTimeoutMs,
      userAgent: this.options.userAgent,
      ...options,
    });
  }

  /**
   * Streams a file to a presigned `uploadUrl` with one PUT, reporting sent bytes. The client's
   * `requestTimeoutMs` is the idle timeout and its `userAgent` is sent; no Authorization header.
   */
  uploadFile(
    uploadUrl: string,
    filePath: string,
    options: Omit<UploadFileOptions, 'userAgent'> = {},
  ): Promise<UploadResult> {
    return uploadFile(uploadUrl, filePath, {
      idleTimeoutMs: this.options.requestTimeoutMs,
      ...options,
      userAgent: this.options.userAgent,
    });
  }

  /**
   * `createUpload` then one PUT of a .blend or .zip (the spec's upload); resolves with the target
   * the file landed at (use its `slug`). A PUT that fails on the network (or a 502/503/504) is sent
   * again, up to `maxRetries` times with back-off, to a new target once the old one expired or is
   * about to: only the rest of the file where the service keeps what it received (extension
   * resumable-uploads), else from the start. Any other answer (413, 415 ...) is final.
   */
  async uploadProject(filePath: string, options: UploadProjectOptions = {}): Promise<UploadTarget> {
    const fileName = basename(filePath);
    const fileType = options.fileType ?? fileTypeFor(fileName);
    if (!fileType) throw new TypeError(`cannot tell the file type of ${fileName}: pass fileType ('blend' or 'zip')`);
    const api = {
      createUpload: (body: RouteBody<'createUpload'>, o: CallOptions) => this.createUpload(body, o),
      // Asked only after a PUT failed: a service that keeps broken PUTs says how far this one got.
      uploadState: async (slug: string, o: CallOptions) =>
        (await this.hasExtension('resumable-uploads', o)) ? this.getUpload(slug, o) : undefined,
    };
    const { target } = await singlePutUpload(api, {
      filePath,
      body: { fileName, fileType },
      contentType: CONTENT_TYPES[fileType][0] ?? 'application/octet-stream',
      onProgress: options.onProgress,
      onRetry: options.onRetry,
      signal: options.signal,
      maxRetries: this.options.maxRetries,
      patienceMs: this.options.reconnectPatienceMs,
      baseDelayMs: this.options.baseDelayMs,
      maxDelayMs: this.options.maxDelayMs,
      renewMarginMs: options.renewMarginMs ?? 60_000,
      idleTimeoutMs: this.options.requestTimeoutMs,
      userAgent: this.options.userAgent,
    });
    return target;
  }

  /**
   * Polls `GET /jobs/{id}` until `status` is one of `targets`. Throws JobStoppedError on a final
   * state that is not a target, WaitTimeoutError after `timeoutMs`, the signal's reason on abort.
   */
  waitForStatus(id: string, targets: readonly JobStatus[], options?: WaitOptions): Promise<Job> {
    return waitForStatus((jobId, o) => this.getJob(jobId, o), id, targets, options);
  }

  /** Every job of every page of `GET /jobs`, fetched a page at a time as the loop asks for more. */
  async *iterateJobs(
    query: Omit<ListJobsParams, 'page'> = {},
    options?: CallOptions,
  ): AsyncGenerator<Job, void, undefined> {
    for (let page = 1; ; page++) {
      const { jobs, pagination } = await this.listJobs({ ...query, page }, options);
      // An empty page ends the walk even if totalPages says more: jobs may have gone meanwhile.
      if (jobs.length === 0) return;
      yield* jobs;
      if (page >= pagination.totalPages) return;
    }
  }
}
