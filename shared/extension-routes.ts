// The routes of the v1 API's extensions (what GET /extensions lists), each naming its extension:
// part of ROUTES (routes.ts), from which the service registers them, the client calls them and the
// OpenAPI document is generated.
import { Job, JobIdParams } from './api/job.js';
import { UploadSlugParams, UploadStateEnvelope } from './api/upload.js';
import { BlobQueryBody, BlobQueryResult, CommitUploadBody, CommittedUpload } from './api/blob-upload.js';
import { FrameStatsPage, FrameStatsQuery } from './api/frame-stats.js';
import { StartRenderBody } from './api/render-config.js';
import { JobLineage, RequeueBody } from './api/requeue.js';
import { CreateSessionBody, EventsQuery, JobEvent, JobTaskList, SessionEnvelope, SignedOut } from './api/dashboard.js';
import { WorkerList } from './api/workers.js';
import { EstimateEnvelope } from './api/estimate.js';
import { TaskLogIndex, TaskLogIndexQuery, TaskLogQuery, TaskLogText } from './api/task-logs.js';
import { ThumbnailImage, ThumbnailList, ThumbnailQuery, ThumbnailsQuery } from './api/thumbnails.js';
import type { RouteDef } from './routes.js';

const jobRoute = { params: JobIdParams } as const;

export const EXTENSION_ROUTES = {
  getUpload: {
    method: 'GET',
    path: '/uploads/:slug',
    summary:
      'An upload target and how many bytes of its PUT the service holds, to continue a PUT whose connection broke',
    params: UploadSlugParams,
    responses: { 200: UploadStateEnvelope },
    errors: ['VALIDATION_ERROR', 'UPLOAD_NOT_FOUND'],
    extension: 'resumable-uploads',
  },
  queryBlobs: {
    method: 'POST',
    path: '/uploads/blobs/query',
    summary: 'Which of these blobs the workspace lacks, with a signed URL for each part to send',
    body: BlobQueryBody,
    responses: { 200: BlobQueryResult },
    errors: [
      'VALIDATION_ERROR',
      'INVALID_JSON',
      'UNSUPPORTED_MEDIA_TYPE',
      'PAYLOAD_TOO_LARGE',
      'STORAGE_QUOTA_EXCEEDED',
    ],
    extension: 'content-addressed-uploads',
    retrySafe: true,
  },
  commitUpload: {
    method: 'POST',
    path: '/uploads/commit',
    summary: "Commit a project's file list over held blobs; answers an ordinary upload slug for POST /jobs",
    body: CommitUploadBody,
    responses: { 201: CommittedUpload },
    errors: [
      'VALIDATION_ERROR',
      'INVALID_JSON',
      'UNSUPPORTED_MEDIA_TYPE',
      'BLOBS_MISSING',
      'PAYLOAD_TOO_LARGE',
      'STORAGE_QUOTA_EXCEEDED',
    ],
    extension: 'content-addressed-uploads',
    retrySafe: true,
  },
  createSession: {
    method: 'POST',
    path: '/sessions',
    summary:
      'Sign in: exchange an API key (in the body, or as Bearer) for an HttpOnly session cookie and its CSRF token',
    body: CreateSessionBody,
    responses: { 201: SessionEnvelope },
    errors: ['VALIDATION_ERROR', 'INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE'],
    auth: 'sign-in',
    extension: 'dashboard-sessions',
  },
  getCurrentSession: {
    method: 'GET',
    path: '/sessions/current',
    summary: "The session this request's cookie belongs to, with its CSRF token (a reloaded page reads it here)",
    responses: { 200: SessionEnvelope },
    errors: ['SESSION_NOT_FOUND'],
    extension: 'dashboard-sessions',
  },
  deleteCurrentSession: {
    method: 'DELETE',
    path: '/sessions/current',
    summary: 'Sign out: the session ends on the server and its cookie is cleared',
    responses: { 200: SignedOut },
    errors: ['CSRF_TOKEN_INVALID'],
    extension: 'dashboard-sessions',
  },
  streamJobEvents: {
    method: 'GET',
    path: '/events',
    summary:
      'Server-Sent Events: a `job` event per recent job, then one whenever a job of the workspace changes; ' +
      'heartbeat comments',
    query: EventsQuery,
    responses: { 200: JobEvent },
    produces: 'text/event-stream',
    errors: ['VALIDATION_ERROR', 'NOT_ACCEPTABLE', 'TOO_MANY_STREAMS'],
    extension: 'job-events',
  },
  listJobTasks: {
    method: 'GET',
    path: '/jobs/:id/tasks',
    summary:
      'The tasks of a job (render chunks with their frames) with state, worker, attempt, duration and exit reason',
    ...jobRoute,
    responses: { 200: JobTaskList },
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND'],
    extension: 'job-tasks',
  },
  requeueJob: {
    method: 'POST',
    path: '/jobs/:id/requeue',
    summary:
      'Requeue a failed or canceled job (or re-render chosen frames of a completed one) as a new job from ' +
      'the same stored project; a repeat answers the same new job',
    ...jobRoute,
    body: RequeueBody,
    responses: { 201: Job, 200: Job },
    headers: { 'X-Idempotent-Replay': 'true on the 200 answer to a repeated requeue' },
    errors: ['VALIDATION_ERROR', 'INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'JOB_NOT_FOUND', 'JOB_NOT_REQUEUEABLE'],
    extension: 'job-requeue',
    retrySafe: true,
  },
  getJobLineage: {
    method: 'GET',
    path: '/jobs/:id/lineage',
    summary: 'The job this one was requeued from, and the jobs requeued from it',
    ...jobRoute,
    responses: { 200: JobLineage },
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND'],
    extension: 'job-requeue',
  },
  listWorkers: {
    method: 'GET',
    path: '/workers',
    summary:
      "The farm's workers (slots and what each runs, GPUs, Blender builds, last heartbeat, blocklisting " +
      "jobs) and the queue's open tasks by kind",
    responses: { 200: WorkerList },
    errors: [],
    extension: 'workers',
  },
  getJobLogs: {
    method: 'GET',
    path: '/jobs/:id/logs',
    summary:
      "The logs of a job's tasks as text: every attempt of every task in task order under a header line; " +
      '`task`/`attempt` narrow it, `follow=true` streams new lines until the job has ended',
    ...jobRoute,
    query: TaskLogQuery,
    responses: { 200: TaskLogText },
    produces: 'text/plain',
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND', 'TASK_LOG_NOT_FOUND', 'TOO_MANY_STREAMS'],
    extension: 'task-logs',
  },
  getJobLogIndex: {
    method: 'GET',
    path: '/jobs/:id/logs/index',
    summary:
      'What task logs a job has: each task with its attempts (worker, state, live or ended, sizes, omitted bytes)',
    ...jobRoute,
    query: TaskLogIndexQuery,
    responses: { 200: TaskLogIndex },
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND', 'TASK_LOG_NOT_FOUND'],
    extension: 'task-logs',
  },
  listJobFrames: {
    method: 'GET',
    path: '/jobs/:id/frames',
    summary:
      'Per-frame statistics of a job (time, peak memory, device, slot, build), paged by frame, with a ' +
      'summary and the live ETA band',
    ...jobRoute,
    query: FrameStatsQuery,
    responses: { 200: FrameStatsPage },
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND'],
    extension: 'frame-stats',
  },
  listJobThumbnails: {
    method: 'GET',
    path: '/jobs/:id/thumbnails',
    summary:
      "Thumbnails of a job's finished frames (at most 256 px a side), in frame order, each with a signed " +
      "URL, the latest finished one, and the shot's fps for a flip-book; listed while the job renders",
    ...jobRoute,
    query: ThumbnailsQuery,
    responses: { 200: ThumbnailList },
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND'],
    extension: 'frame-thumbnails',
  },
  getJobThumbnail: {
    method: 'GET',
    path: '/jobs/:id/thumbnails/image',
    summary:
      "One thumbnail's image (JPEG or PNG): of `frame`, or of the frame that finished last; the " +
      'X-Thumbnail-Frame header names the frame',
    ...jobRoute,
    query: ThumbnailQuery,
    responses: { 200: ThumbnailImage },
    produces: 'image/*',
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND', 'THUMBNAIL_NOT_FOUND'],
    extension: 'frame-thumbnails',
  },
  startEstimate: {
    method: 'POST',
    path: '/jobs/:id/estimate',
    summary:
      "Estimate a validated job's render (wall time, compute, cost, peak memory, output size, with bands) by " +
      'rendering sample frames on the farm, kept for the render; the job stays validated; a repeat with the ' +
      'same request answers the same estimate',
    ...jobRoute,
    body: StartRenderBody,
    responses: { 202: EstimateEnvelope, 200: EstimateEnvelope },
    headers: { 'X-Idempotent-Replay': 'true on the 200 answer to a repeated estimate request' },
    errors: [
      'VALIDATION_ERROR',
      'INVALID_JSON',
      'UNSUPPORTED_MEDIA_TYPE',
      'JOB_NOT_FOUND',
      'ESTIMATE_NOT_ALLOWED',
      'ESTIMATE_IN_PROGRESS',
    ],
    extension: 'estimate',
    retrySafe: true,
  },
  getEstimate: {
    method: 'GET',
    path: '/jobs/:id/estimate',
    summary:
      "A job's estimate: its state, the sampled frames, the figures with their bands (refined as frames " +
      'finish) and warnings',
    ...jobRoute,
    responses: { 200: EstimateEnvelope },
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND', 'ESTIMATE_NOT_FOUND'],
    extension: 'estimate',
  },
  cancelEstimate: {
    method: 'DELETE',
    path: '/jobs/:id/estimate',
    summary:
      "Cancel a job's estimate that is still sampling, or set a failed one aside so the same request may be " +
      'asked again (the job stays validated; a ready estimate is answered as it is)',
    ...jobRoute,
    responses: { 200: EstimateEnvelope },
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND', 'ESTIMATE_NOT_FOUND'],
    extension: 'estimate',
  },
} as const satisfies Record<string, RouteDef>;
