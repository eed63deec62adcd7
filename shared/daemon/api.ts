// The bridge daemon's local HTTP API (127.0.0.1 only, every request with the daemon's token):
// what the Blender add-on, the tray app and `renderbridge` talk to. Schemas for bodies, answers
// and Server-Sent Events are defined once (packs and submissions in submission-schemas.ts, tracked
// jobs in job-schemas.ts); the daemon validates with them, clients parse with them. Here: the state
// file, health, and every route and event.
import { z } from 'zod';
import { Estimate } from '../api/estimate.js';
import { Job } from '../api/job.js';
import { JobProgress } from '../api/progress.js';
import { SetPriorityBody } from '../api/scheduling.js';
import { DaemonThumbnails, DownloadRequest, DownloadState, RenderComplete, TrackedJob } from './job-schemas.js';
import { PackRequest, PackResult, PackState, Submission, SubmitRequest } from './submission-schemas.js';

/** Default port of the daemon on 127.0.0.1 (override with --port or RENDERBRIDGE_DAEMON_PORT). */
export const DAEMON_DEFAULT_PORT = 47_615;
/** File the daemon writes in the per-user state folder (mode 0600). */
export const DAEMON_STATE_FILE = 'daemon.json';
/** Path of the webhook receiver: the only route that takes a signature instead of the token. */
export const DAEMON_WEBHOOK_PATH = '/webhooks/render-complete';

/** What the daemon writes to its state file so local clients can find and call it. */
export const DaemonState = z.object({
  version: z.literal(1),
  pid: z.int(),
  port: z.int().min(1).max(65_535),
  /** Random access token (256 bits, base64url); every request carries it as `Authorization: Bearer`. */
  token: z.string().min(32),
  startedAt: z.string(),
  daemonVersion: z.string(),
});
export type DaemonState = z.infer<typeof DaemonState>;

export const Health = z.object({
  status: z.literal('ok'),
  version: z.string(),
  /** True when an API key was found (keychain or RENDERBRIDGE_API_KEY); the key itself is never returned. */
  apiKeyConfigured: z.boolean(),
  apiKeySource: z.enum(['keychain', 'env']).nullable(),
  /** The service API root in use now (it follows edits of config.toml). */
  serviceUrl: z.string(),
  /** The profile of config.toml in use (its keychain entry holds the key). */
  profile: z.string(),
  hotFolder: z.string().nullable(),
  pid: z.int(),
  startedAt: z.string(),
});
export type Health = z.infer<typeof Health>;

/** Server-Sent Events of `GET /events`: the SSE `event:` name and the JSON `data:` of each. */
export const DAEMON_EVENTS = {
  job: TrackedJob,
  progress: JobProgress,
  submission: Submission,
  pack: PackState,
  download: DownloadState,
  renderComplete: RenderComplete,
} as const;
export type DaemonEventName = keyof typeof DAEMON_EVENTS;
export type DaemonEvent = {
  [K in DaemonEventName]: { event: K; data: z.infer<(typeof DAEMON_EVENTS)[K]> };
}[DaemonEventName];

/** Every endpoint: success status, method, path (fastify style), body and answer schemas. */
export const DAEMON_ROUTES = {
  health: { status: 200, method: 'GET', path: '/health', response: Health },
  /** Packs while the request waits (kept for scripts); the add-on and tray use startPack. */
  pack: { status: 200, method: 'POST', path: '/pack', body: PackRequest, response: PackResult },
  startPack: { status: 202, method: 'POST', path: '/packs', body: PackRequest, response: PackState },
  getPack: { status: 200, method: 'GET', path: '/packs/:id', response: PackState },
  submit: { status: 202, method: 'POST', path: '/submissions', body: SubmitRequest, response: Submission },
  listSubmissions: {
    status: 200,
    method: 'GET',
    path: '/submissions',
    response: z.object({ submissions: z.array(Submission) }),
  },
  getSubmission: { status: 200, method: 'GET', path: '/submissions/:id', response: Submission },
  listJobs: { status: 200, method: 'GET', path: '/jobs', response: z.object({ jobs: z.array(TrackedJob) }) },
  getJob: { status: 200, method: 'GET', path: '/jobs/:id', response: TrackedJob },
  cancelJob: { status: 200, method: 'POST', path: '/jobs/:id/cancel', response: TrackedJob },
  downloadJob: {
    status: 202,
    method: 'POST',
    path: '/jobs/:id/download',
    body: DownloadRequest,
    response: DownloadState,
  },
  listJobThumbnails: { status: 200, method: 'GET', path: '/jobs/:id/thumbnails', response: DaemonThumbnails },
  /** The image's bytes (JPEG or PNG), fetched from the service with the daemon's API key. */
  getJobThumbnail: {
    status: 200,
    method: 'GET',
    path: '/jobs/:id/thumbnails/image',
    response: z.string().meta({ format: 'binary' }),
  },
  /**
   * The job's estimate as the service has it (extension estimate); start one with POST /submissions, mode `estimate`.
   */
  getJobEstimate: { status: 200, method: 'GET', path: '/jobs/:id/estimate', response: Estimate },
  /**
   * Cancels the job's estimate while it samples (the job stays `validated`); the submission
   * following it fails ESTIMATE_CANCELED.
   */
  cancelJobEstimate: { status: 200, method: 'DELETE', path: '/jobs/:id/estimate', response: Estimate },
  /**
   * A job's priority, pause and resume, and "go" after its preview frames (the service's extension
   * scheduling), through the daemon with its API key; each answers the service's job.
   */
  setJobPriority: { status: 200, method: 'POST', path: '/jobs/:id/priority', body: SetPriorityBody, response: Job },
  pauseJob: { status: 200, method: 'POST', path: '/jobs/:id/pause', response: Job },
  resumeJob: { status: 200, method: 'POST', path: '/jobs/:id/resume', response: Job },
  approvePreviews: { status: 200, method: 'POST', path: '/jobs/:id/approve-previews', response: Job },
  events: { status: 200, method: 'GET', path: '/events', response: z.never() },
} as const;
export type DaemonRouteName = keyof typeof DAEMON_ROUTES;
