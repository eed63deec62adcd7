// The v1 API under its prefix: JSON bodies only, every request authenticated, the spec's routes
// on the service's context, and each extension's routes where its parts are present. The rest of
// the service's HTTP side (health, metrics, the dashboard, presigned storage, the worker API) is
// app.ts's, which builds what these routes share.
import type { FastifyInstance } from 'fastify';
import type { ExtensionName } from '../shared/extensions.js';
import type { AppDeps } from './app.js';
import type { ServiceContext } from './context.js';
import type { PartialUploads } from './adapters/fs-storage/partial-uploads.js';
import type { makeAuthenticate } from './http/auth.js';
import { jsonBodyParser } from './http/json-body.js';
import type { SessionAuth } from './http/session-auth.js';
import type { StorageQuota } from './http/storage-quota.js';
import type { StreamGate } from './http/stream-gate.js';
import type { RateLimiter } from './ports/rate-limit.js';
import { JobFeed } from './events/job-feed.js';
import { blobCommitRoutes } from './routes/blob-commit.js';
import { blobQueryRoutes, type BlobApiDeps } from './routes/blob-query.js';
import { estimateRoutes } from './routes/estimate.js';
import { farmShareRoutes } from './routes/farm-share.js';
import { eventRoutes } from './routes/events.js';
import { extensionRoutes } from './routes/extensions.js';
import { frameStatsRoutes } from './routes/frame-stats.js';
import { jobActionRoutes } from './routes/job-actions.js';
import { jobRoutes } from './routes/jobs.js';
import { progressRoutes } from './routes/progress.js';
import { requeueRoutes } from './routes/requeue.js';
import { schedulingRoutes } from './routes/scheduling.js';
import { sessionRoutes } from './routes/sessions.js';
import { taskLogRoutes } from './routes/task-logs.js';
import { taskRoutes } from './routes/tasks.js';
import { thumbnailRoutes } from './routes/thumbnails.js';
import { uploadRoutes, uploadStateRoutes } from './routes/uploads.js';
import { workerRoutes } from './routes/workers.js';

/** What the API's routes share, built once by buildApp. */
export interface ApiRoutesOptions {
  deps: AppDeps;
  authenticate: ReturnType<typeof makeAuthenticate>;
  /** Each key's request budget. */
  limiter: RateLimiter;
  /** Failed authentications per remote address. */
  failures: RateLimiter;
  /** Places for follows and event streams, per key and per process. */
  streams: StreamGate;
  /** Dashboard sessions (extension dashboard-sessions). Default none: the extension is off. */
  sessions?: SessionAuth;
  /** Kept bytes of broken PUTs (extension resumable-uploads). Default none: the extension is off. */
  partials?: PartialUploads;
  /** Each workspace's storage quota. Default none: unlimited. */
  quota?: StorageQuota;
  /** The content-addressed upload extension's routes' parts. Default none: the extension is off. */
  blobs?: BlobApiDeps;
}

/** Registers the API's routes on `api`, an instance under the API prefix. */
export async function apiRoutes(api: FastifyInstance, o: ApiRoutesOptions): Promise<void> {
  const { deps, authenticate, limiter, failures, streams, sessions, partials, quota, blobs } = o;
  // The API speaks JSON only: any other body type is a 415, never parsed as text.
  api.removeContentTypeParser(['text/plain', 'application/json']);
  api.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    jsonBodyParser(api.getDefaultJsonParser('error', 'error')),
  );
  api.addHook('onRequest', authenticate);
  const ctx: ServiceContext = {
    config: deps.config,
    jobs: deps.jobs,
    storage: deps.storage,
    queue: deps.queue,
    keys: deps.keys,
    ...(deps.events ? { events: deps.events } : {}),
    ...(quota ? { quota } : {}),
    ...(deps.clock ? { clock: deps.clock } : {}),
  };
  await api.register(uploadRoutes, ctx);
  if (partials) await api.register(uploadStateRoutes, { ctx, partials });
  await api.register(jobRoutes, ctx);
  await api.register(jobActionRoutes, ctx);
  await api.register(schedulingRoutes, ctx);
  await api.register(progressRoutes, { ...ctx, ...(deps.frameStats ? { frameStats: deps.frameStats } : {}) });
  const enabled: ExtensionName[] = [
    ...(blobs ? ['content-addressed-uploads' as const] : []),
    ...(partials ? ['resumable-uploads' as const] : []),
    ...(sessions ? ['dashboard-sessions' as const] : []),
    'job-events',
    ...(deps.taskRuns ? ['job-tasks' as const] : []),
    ...(deps.requeues ? ['job-requeue' as const] : []),
    ...(deps.workers ? ['workers' as const] : []),
    ...(deps.taskRuns ? ['task-logs' as const] : []),
    ...(deps.frameStats ? ['frame-stats' as const, 'estimate' as const] : []),
    'frame-thumbnails',
    'scheduling',
  ];
  await api.register(extensionRoutes, { enabled });
  if (sessions) await api.register(sessionRoutes, { keys: deps.keys, limiter, sessions, failures });
  const feed = new JobFeed({
    jobs: deps.jobs,
    storage: deps.storage,
    urlTtlSeconds: deps.config.downloadUrlTtlSeconds,
    ...(deps.eventStream?.pollMs ? { pollMs: deps.eventStream.pollMs } : {}),
    onError: (err, workspaceId) =>
      api.log.warn({ err, workspaceId }, 'reading job changes for the event stream failed'),
  });
  await api.register(eventRoutes, {
    feed,
    keys: deps.keys,
    gate: streams,
    maxMs: deps.config.streamMaxSeconds * 1000,
    ...(sessions ? { sessions } : {}),
    ...(deps.eventStream?.heartbeatMs ? { heartbeatMs: deps.eventStream.heartbeatMs } : {}),
  });
  if (deps.taskRuns) await api.register(taskRoutes, { ctx, tasks: deps.taskRuns });
  if (deps.taskRuns) await api.register(taskLogRoutes, { ctx, tasks: deps.taskRuns, gate: streams, ...deps.taskLogs });
  if (deps.requeues) await api.register(requeueRoutes, { ctx, requeues: deps.requeues });
  if (deps.frameStats) await api.register(frameStatsRoutes, { ctx, frames: deps.frameStats });
  // The estimate measures its frames as frame statistics do: it comes with them.
  if (deps.frameStats) await api.register(estimateRoutes, { ctx, ...(deps.workers ? { workers: deps.workers } : {}) });
  await api.register(thumbnailRoutes, { ctx, ...(deps.frameStats ? { frames: deps.frameStats } : {}) });
  // The queue ahead and the farm's share need the registry's live slots.
  if (deps.workers) await api.register(farmShareRoutes, { ctx, ...deps.workers, jobs: deps.jobs });
  if (deps.workers)
    await api.register(workerRoutes, {
      registry: deps.workers.registry,
      queue: deps.workers.queue,
      jobs: deps.jobs,
    });
  if (blobs) {
    await api.register(blobQueryRoutes, blobs);
    await api.register(blobCommitRoutes, blobs);
  }
}
