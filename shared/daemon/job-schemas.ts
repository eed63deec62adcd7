// The daemon API's schemas of the jobs it tracks: a job with its progress and download, a download
// request and state, the render-complete event, and the frame thumbnails the job window shows.
// The routes and events that use them: api.ts.
import { z } from 'zod';
import { ErrorBody } from '../api/error-body.js';
import { Job } from '../api/job.js';
import { JobProgress } from '../api/progress.js';

export const DownloadState = z.object({
  jobId: z.string(),
  outDir: z.string(),
  state: z.enum(['pending', 'downloading', 'done', 'failed']),
  files: z.int(),
  filesDone: z.int(),
  bytes: z.int(),
  bytesDone: z.int(),
  /** Files left alone because a complete copy was already there. */
  skipped: z.int(),
  /** Output names from the service that were not written because they would leave the folder. */
  refused: z.array(z.object({ name: z.string(), reason: z.string() })).default([]),
  error: ErrorBody.nullable(),
});
export type DownloadState = z.infer<typeof DownloadState>;

/** A job of the key's workspace as the daemon tracks it. */
export const TrackedJob = z.object({
  job: Job,
  progress: JobProgress.nullable(),
  download: DownloadState.nullable(),
});
export type TrackedJob = z.infer<typeof TrackedJob>;

export const DownloadRequest = z.strictObject({ outDir: z.string().min(1).max(4096).optional() });

export const RenderComplete = z.object({
  jobId: z.string(),
  status: z.enum(['completed', 'failed', 'canceled']),
  job: Job,
  /** Where the outputs are (or will be) downloaded; null when not downloading. */
  outDir: z.string().nullable(),
});
export type RenderComplete = z.infer<typeof RenderComplete>;

/**
 * A frame thumbnail as the daemon hands it to the job window: the image comes from the daemon, which holds the API key.
 */
export const DaemonThumbnail = z.object({
  frame: z.int().min(0),
  /** The daemon's own path of the image (GET, with the daemon's token). */
  url: z.string(),
});
export type DaemonThumbnail = z.infer<typeof DaemonThumbnail>;

/**
 * A job's frame thumbnails (the service's extension frame-thumbnails), the first DAEMON_MAX_THUMBNAILS in frame order.
 */
export const DaemonThumbnails = z.object({
  jobId: z.string(),
  /** The shot's frame rate; null until the render is planned. */
  fps: z.number().gt(0).nullable(),
  /** The frame that finished last; null when none has a thumbnail. */
  latest: DaemonThumbnail.nullable(),
  thumbnails: z.array(DaemonThumbnail),
  /** Thumbnails the job has, also those past the ones listed. */
  total: z.int().min(0),
});
export type DaemonThumbnails = z.infer<typeof DaemonThumbnails>;

/** Thumbnails one answer of GET /jobs/:id/thumbnails lists at most. */
export const DAEMON_MAX_THUMBNAILS = 2000;

/** Query of GET /jobs/:id/thumbnails/image: the frame, or none for the one that finished last. */
export const DaemonThumbnailQuery = z.strictObject({ frame: z.coerce.number().int().min(0).max(1_048_574).optional() });
