// The routes of the v1 API's extensions (what GET /extensions lists), grouped by extension: part
// of ROUTES (routes.ts), from which the service registers them, the client calls them and the
// OpenAPI document is generated. The order here is the order of the document's paths.
import { Job } from './api/job.js';
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
import { BODY_ERRORS, JOB_ERRORS, JOB_PARAMS, routesOfExtension } from './route-builder.js';
import type { RouteDef } from './routes.js';

export const EXTENSION_ROUTES = {
  ...routesOfExtension('resumable-uploads', {
    getUpload: {
      method: 'GET',
      path: '/uploads/:slug',
      summary:
        'An upload target and how many bytes of its PUT the service holds, to continue a PUT whose connection broke',
      params: UploadSlugParams,
      responses: { 200: UploadStateEnvelope },
      errors: ['VALIDATION_ERROR', 'UPLOAD_NOT_FOUND'],
    },
  }),
  ...routesOfExtension('content-addressed-uploads', {
    queryBlobs: {
      method: 'POST',
      path: '/uploads/blobs/query',
      summary: 'Which of these blobs the workspace lacks, with a signed URL for each part to send',
      body: BlobQueryBody,
      responses: { 200: BlobQueryResult },
      errors: [...BODY_ERRORS, 'PAYLOAD_TOO_LARGE', 'STORAGE_QUOTA_EXCEEDED'],
      retrySafe: true,
    },
    commitUpload: {
      method: 'POST',
      path: '/uploads/commit',
      summary: "Commit a project's file list over held blobs; answers an ordinary upload slug for POST /jobs",
      body: CommitUploadBody,
      responses: { 201: CommittedUpload },
      errors: [...BODY_ERRORS, 'BLOBS_MISSING', 'PAYLOAD_TOO_LARGE', 'STORAGE_QUOTA_EXCEEDED'],
      retrySafe: true,
    },
  }),
  ...routesOfExtension('dashboard-sessions', {
    createSession: {
      method: 'POST',
      path: '/sessions',
      summary:
        'Sign in: exchange an API key (in the body, or as Bearer) for an HttpOnly session cookie and its CSRF token',
      body: CreateSessionBody,
      responses: { 201: SessionEnvelope },
      errors: BODY_ERRORS,
      auth: 'sign-in',
    },
    getCurrentSession: {
      method: 'GET',
      path: '/sessions/current',
      summary: "The session this request's cookie belongs to, with its CSRF token (a reloaded page reads it here)",
      responses: { 200: SessionEnvelope },
      errors: ['SESSION_NOT_FOUND'],
    },
    deleteCurrentSession: {
      method: 'DELETE',
      path: '/sessions/current',
      summary: 'Sign out: the session ends on the server and its cookie is cleared',
      responses: { 200: SignedOut },
      errors: ['CSRF_TOKEN_INVALID'],
    },
  }),
  ...routesOfExtension('job-events', {
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
    },
  }),
  ...routesOfExtension('job-tasks', {
    listJobTasks: {
      method: 'GET',
      path: '/jobs/:id/tasks',
      summary:
        'The tasks of a job (render chunks with their frames) with state, worker, attempt, duration and exit reason',
      ...JOB_PARAMS,
      responses: { 200: JobTaskList },
      errors: JOB_ERRORS,
    },
  }),
  ...routesOfExtension('job-requeue', {
    requeueJob: {
      method: 'POST',
      path: '/jobs/:id/requeue',
      summary:
        'Requeue a failed or canceled job (or re-render chosen frames of a completed one) as a new job from ' +
        'the same stored project; a repeat answers the same new job',
      ...JOB_PARAMS,
      body: RequeueBody,
      responses: { 201: Job, 200: Job },
      headers: { 'X-Idempotent-Replay': 'true on the 200 answer to a repeated requeue' },
      errors: [...BODY_ERRORS, 'JOB_NOT_FOUND', 'JOB_NOT_REQUEUEABLE'],
      retrySafe: true,
    },
    getJobLineage: {
      method: 'GET',
      path: '/jobs/:id/lineage',
      summary: 'The job this one was requeued from, and the jobs requeued from it',
      ...JOB_PARAMS,
      responses: { 200: JobLineage },
      errors: JOB_ERRORS,
    },
  }),
  ...routesOfExtension('workers', {
    listWorkers: {
      method: 'GET',
      path: '/workers',
      summary:
        "The farm's workers (slots and what each runs, GPUs, Blender builds, last heartbeat, blocklisting " +
        "jobs) and the queue's open tasks by kind",
      responses: { 200: WorkerList },
      errors: [],
    },
  }),
  ...routesOfExtension('task-logs', {
    getJobLogs: {
      method: 'GET',
      path: '/jobs/:id/logs',
      summary:
        "The logs of a job's tasks as text: every attempt of every task in task order under a header line; " +
        '`task`/`attempt` narrow it, `follow=true` streams new lines until the job has ended',
      ...JOB_PARAMS,
      query: TaskLogQuery,
      responses: { 200: TaskLogText },
      produces: 'text/plain',
      errors: [...JOB_ERRORS, 'TASK_LOG_NOT_FOUND', 'TOO_MANY_STREAMS'],
    },
    getJobLogIndex: {
      method: 'GET',
      path: '/jobs/:id/logs/index',
      summary:
        'What task logs a job has: each task with its attempts (worker, state, live or ended, sizes, omitted bytes)',
      ...JOB_PARAMS,
      query: TaskLogIndexQuery,
      responses: { 200: TaskLogIndex },
      errors: [...JOB_ERRORS, 'TASK_LOG_NOT_FOUND'],
    },
  }),
  ...routesOfExtension('frame-stats', {
    listJobFrames: {
      method: 'GET',
      path: '/jobs/:id/frames',
      summary:
        'Per-frame statistics of a job (time, peak memory, device, slot, build), paged by frame, with a ' +
        'summary and the live ETA band',
      ...JOB_PARAMS,
      query: FrameStatsQuery,
      responses: { 200: FrameStatsPage },
      errors: JOB_ERRORS,
    },
  }),
  ...routesOfExtension('frame-thumbnails', {
    listJobThumbnails: {
      method: 'GET',
      path: '/jobs/:id/thumbnails',
      summary:
        "Thumbnails of a job's finished frames (at most 256 px a side), in frame order, each with a signed " +
        "URL, the latest finished one, and the shot's fps for a flip-book; listed while the job renders",
      ...JOB_PARAMS,
      query: ThumbnailsQuery,
      responses: { 200: ThumbnailList },
      errors: JOB_ERRORS,
    },
    getJobThumbnail: {
      method: 'GET',
      path: '/jobs/:id/thumbnails/image',
      summary:
        "One thumbnail's image (JPEG or PNG): of `frame`, or of the frame that finished last; the " +
        'X-Thumbnail-Frame header names the frame',
      ...JOB_PARAMS,
      query: ThumbnailQuery,
      responses: { 200: ThumbnailImage },
      produces: 'image/*',
      errors: [...JOB_ERRORS, 'THUMBNAIL_NOT_FOUND'],
    },
  }),
  ...routesOfExtension('estimate', {
    startEstimate: {
      method: 'POST',
      path: '/jobs/:id/estimate',
      summary:
        "Estimate a validated job's render (wall time, compute, cost, peak memory, output size, with bands) by " +
        'rendering sample frames on the farm, kept for the render; the job stays validated; a repeat with the ' +
        'same request answers the same estimate',
      ...JOB_PARAMS,
      body: StartRenderBody,
      responses: { 202: EstimateEnvelope, 200: EstimateEnvelope },
      headers: { 'X-Idempotent-Replay': 'true on the 200 answer to a repeated estimate request' },
      errors: [...BODY_ERRORS, 'JOB_NOT_FOUND', 'ESTIMATE_NOT_ALLOWED', 'ESTIMATE_IN_PROGRESS'],
      retrySafe: true,
    },
    getEstimate: {
      method: 'GET',
      path: '/jobs/:id/estimate',
      summary:
        "A job's estimate: its state, the sampled frames, the figures with their bands (refined as frames " +
        'finish) and warnings',
      ...JOB_PARAMS,
      responses: { 200: EstimateEnvelope },
      errors: [...JOB_ERRORS, 'ESTIMATE_NOT_FOUND'],
    },
    cancelEstimate: {
      method: 'DELETE',
      path: '/jobs/:id/estimate',
      summary:
        "Cancel a job's estimate that is still sampling, or set a failed one aside so the same request may be " +
        'asked again (the job stays validated; a ready estimate is answered as it is)',
      ...JOB_PARAMS,
      responses: { 200: EstimateEnvelope },
      errors: [...JOB_ERRORS, 'ESTIMATE_NOT_FOUND'],
    },
  }),
} as const satisfies Record<string, RouteDef>;
