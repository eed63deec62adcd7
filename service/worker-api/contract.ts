// The internal worker API: how a `renderbridge worker` on another machine reads and moves jobs
// through the service, which alone writes job state. The routes (routes.ts) and the worker's
// client (../worker/remote-jobs.ts) both read the paths and schemas from here.
//
// Every call carries `Authorization: Bearer <worker token>`: the worker's own token (renderbridge
// admin create-worker-token), or the deprecated farm-wide RENDERBRIDGE_WORKER_TOKEN. A worker's
// token answers only for jobs of tasks it holds a lease on (lease ids start `<token name>:`), and
// for ended jobs whose tasks it ran; any other job is 404 JOB_NOT_FOUND, whether it exists or not.
// Errors use the public API's error body.
//
//   GET  /workers/me           -> 200 { name: string | null } the token's worker name (null: farm-wide token)
//   GET  /jobs/:id[?via=J]     -> 200 JobRecord { job, internal }; 404 JOB_NOT_FOUND. `via`: a job
//                                 the worker holds, whose requeue chain names :id (read only)
//   POST /jobs/:id/transition  TransitionBody -> 200 { data: JobRecord | null } (null: status did not match)
//   POST /jobs/:id/update      UpdateBody     -> 200 { data: JobRecord | null } (null: no such job)
//   POST /jobs/:id/preview-gate PreviewGateBody -> 200 { data: JobRecord | null } (null: the gate was
//                                 not one of `from`): the approval gate's compare-and-set (JobRecords.setPreviewGate)
//   POST /jobs/:id/scheduling  SchedulingFieldsBody -> 200 { data: JobRecord | null } (null: no such
//                                 job): a field-level write of the job's scheduling (JobRecords.setSchedulingFields)
//   PUT  /jobs/:id/progress    JobProgress    -> 204 (jobId must equal :id)
//   POST /jobs/:id/completed   (no body)      -> 204 after the service recorded the completion
//                                                (onRenderComplete webhook); idempotent
//   GET  /workers/live         -> 200 LiveWorkersAnswer: the live workers' render slots, tags and builds
//                                 (no tasks, no jobs): placement's view of the farm (remote-farm.ts)
//   POST /workers/heartbeat    WorkerReportWire -> 204: the worker's latest report, stamped with
//                                                the service's clock (extension workers); its id
//                                                must start `<token name>:` (403 WORKER_ID_MISMATCH)
//
// Tasks: task-contract.ts; object storage (a worker without bucket keys): storage-contract.ts;
// preemption's reads of the queue (extension scheduling): waiting-routes.ts.
import { z } from 'zod';
import { Job, JobIdParams, JobStatus } from '../../shared/api/job.js';
import { Uuid } from '../../shared/api/common.js';
import { JobProgress } from '../../shared/api/progress.js';
import { PreviewGate, Priority } from '../../shared/api/scheduling.js';
import { WorkerInternalWire } from './internal-state.js';

/** Where the internal API lives on the service, beside (never under) the public API prefix. */
export const WORKER_API_PREFIX = '/internal/worker/v1';

/**
 * Largest JSON body of these routes. Above the public API's limit: a finished job's transition
 * carries the list of every output file, which passes 1 MiB for long stereo renders.
 */
export const WORKER_API_BODY_LIMIT = 64 * 1024 * 1024;

export { JobIdParams };

/**
 * Service-only job state (JobInternal) as the service answers it: the service's own record, read
 * as a JSON object (a newer service may hold fields this worker does not know).
 */
export const JobInternalWire = z.record(z.string(), z.unknown());

/** What a worker may write into it: strict, storage keys checked against the job's prefix (internal-state.ts). */
export { WorkerInternalWire };

/** The fields a worker may set on a job (JobPatch): the Job schema minus identity and status. */
export const JobPatchWire = z.strictObject(
  Job.omit({ id: true, workspaceId: true, userId: true, createdAt: true, status: true, previewUrl: true }).partial()
    .shape,
);

/** A job as stored (JobRecord): the API fields without `previewUrl`, plus internal state. */
export const JobRecordWire = z.object({
  job: Job.omit({ previewUrl: true }),
  internal: JobInternalWire,
});

export const TransitionBody = z.strictObject({
  /** Statuses the job may be in for the move to happen (compare-and-set). */
  from: z.array(JobStatus).min(1).max(20),
  to: JobStatus,
  patch: JobPatchWire.optional(),
  internal: WorkerInternalWire.optional(),
});
export type TransitionBody = z.infer<typeof TransitionBody>;

export const UpdateBody = z.strictObject({
  patch: JobPatchWire,
  internal: WorkerInternalWire.optional(),
});
export type UpdateBody = z.infer<typeof UpdateBody>;

/** The approval gate's compare-and-set (extension scheduling): see JobRecords.setPreviewGate. */
export const PreviewGateBody = z.strictObject({
  from: z.array(PreviewGate).min(1).max(3),
  to: z.strictObject({ gate: PreviewGate, frames: z.array(z.int()).max(100_000).optional() }),
  internal: WorkerInternalWire.optional(),
});
export type PreviewGateBody = z.infer<typeof PreviewGateBody>;

/** A field-level write of the job's scheduling (extension scheduling): see JobRecords.setSchedulingFields. */
export const SchedulingFieldsBody = z.strictObject({
  priority: Priority.optional(),
  paused: z.boolean().optional(),
  waitingFor: z.array(Uuid).max(100).optional(),
});
export type SchedulingFieldsBody = z.infer<typeof SchedulingFieldsBody>;

export const ProgressBody = JobProgress;

/** GET /jobs/:id's query: `via` names the job the worker holds when it reads a job it was requeued from. */
export const GetJobQuery = z.strictObject({ via: Uuid.optional() });

/** GET /workers/me: whom the token identifies. */
export const WhoamiAnswer = z.object({ name: z.string().nullable() });

/** Answer of transition and update: the record after the write, or null when nothing was written. */
export const MaybeRecordEnvelope = z.object({ data: JobRecordWire.nullable() });

const TaskKindWire = z.enum(['validate', 'render', 'render-chunk', 'finalize']);
const text = z.string().max(1000);

/** A worker's heartbeat report (WorkerReport of service/ports/workers.ts). */
export const WorkerReportWire = z.strictObject({
  id: text.min(1),
  name: text,
  hostname: text,
  version: text,
  startedAt: z.iso.datetime({ offset: true }),
  state: z.enum(['running', 'stopped']),
  heartbeatIntervalMs: z.int().min(100).max(3_600_000),
  slots: z
    .array(
      z.strictObject({
        id: text,
        device: z.strictObject({ kind: z.enum(['cpu', 'gpu', 'control']), name: text, uuid: text.nullable() }),
        state: z.enum(['idle', 'busy', 'loading']),
        tasks: z
          .array(
            z.strictObject({
              jobId: text,
              taskId: text,
              kind: TaskKindWire,
              frames: z.array(z.int()).max(100_000).nullable(),
              startedAt: z.iso.datetime({ offset: true }),
            }),
          )
          .max(16),
        warmJobId: text.nullable(),
        memoryBytes: z.number().min(0).optional(),
      }),
    )
    .max(256),
  memoryBytes: z.number().min(0).optional(),
  tags: z.array(z.string().min(1).max(200)).max(64).optional(),
  builds: z
    .array(z.strictObject({ version: text, path: text, kind: z.enum(['executable', 'release', 'root']).optional() }))
    .max(64),
  gpus: z.array(z.strictObject({ name: text, uuid: text, memoryMiB: z.number().min(0) })).max(64),
  sandbox: z.boolean().optional(),
  blocklistedBy: z
    .array(z.strictObject({ jobId: text, slots: z.array(text).max(256), failures: z.int().min(0) }))
    .max(1000),
});

/**
 * A live worker as another worker may see it (GET /workers/live): what placement and planning read
 * (render slots with their memory, tags, builds), never what it runs (other workspaces' jobs).
 * `heartbeatAgoMs` rather than a time: the two machines' clocks need not agree.
 */
export const LiveWorkerWire = z.object({
  id: text,
  heartbeatAgoMs: z.number().min(0),
  heartbeatIntervalMs: z.int().min(100),
  slots: z.array(
    z.object({ id: text, kind: z.enum(['cpu', 'gpu', 'control']), memoryBytes: z.number().min(0).optional() }),
  ),
  tags: z.array(z.string()),
  builds: z.array(z.object({ version: text })),
});
export type LiveWorkerWire = z.infer<typeof LiveWorkerWire>;
export const LiveWorkersAnswer = z.object({ workers: z.array(LiveWorkerWire) });

/** The routes, fastify style (`:id`), relative to WORKER_API_PREFIX. */
export const WORKER_ROUTES = {
  whoami: { method: 'GET', path: '/workers/me' },
  getJob: { method: 'GET', path: '/jobs/:id' },
  transition: { method: 'POST', path: '/jobs/:id/transition' },
  update: { method: 'POST', path: '/jobs/:id/update' },
  previewGate: { method: 'POST', path: '/jobs/:id/preview-gate' },
  scheduling: { method: 'POST', path: '/jobs/:id/scheduling' },
  progress: { method: 'PUT', path: '/jobs/:id/progress' },
  completed: { method: 'POST', path: '/jobs/:id/completed' },
  heartbeat: { method: 'POST', path: '/workers/heartbeat' },
  liveWorkers: { method: 'GET', path: '/workers/live' },
} as const;

export type WorkerRouteName = keyof typeof WORKER_ROUTES;

/** The path of one route for one job, prefix included (what a client appends to a service URL). */
export function workerApiPath(route: WorkerRouteName, jobId: string): string {
  return `${WORKER_API_PREFIX}${WORKER_ROUTES[route].path.replace(':id', encodeURIComponent(jobId))}`;
}
