// Bodies of the dashboard's extensions of the v1 API: sessions (dashboard-sessions), the job
// event stream (job-events) and a job's tasks (job-tasks).
import { z } from 'zod';
import { DateTime, Uuid } from './common.js';
import { Job } from './job.js';
import { JobProgress } from './progress.js';

/** POST /sessions: the API key to exchange, unless it comes as `Authorization: Bearer`. */
export const CreateSessionBody = z
  .strictObject({
    /** Sent once to sign in; the session cookie replaces it, so the browser never keeps the key. */
    apiKey: z.string().min(1).max(200).optional(),
  })
  .meta({ id: 'CreateSessionBody' });

export const Session = z
  .object({
    /** Send it as `X-CSRF-Token` with every request that is not GET (the cookie alone is refused). */
    csrfToken: z.string(),
    /** When the session ends unless a request comes first (the idle expiry, capped by the absolute one). */
    expiresAt: DateTime,
    /** When the session ends however active it is. */
    maxExpiresAt: DateTime,
    /** Seconds without a request after which the session ends. */
    idleTimeoutSeconds: z.int().min(1),
    workspace: z.object({ id: Uuid, name: z.string() }),
  })
  .meta({ id: 'Session' });
export type Session = z.infer<typeof Session>;

export const SessionEnvelope = z.object({ data: Session }).meta({ id: 'SessionEnvelope' });

/** DELETE /sessions/current: whether a session was ended (false: the request carried none, e.g. a Bearer key). */
export const SignedOut = z.object({ data: z.object({ ended: z.boolean() }) }).meta({ id: 'SignedOut' });

/** One task of a job: validation, planning, a render chunk (its frames) or finalize. */
export const JobTask = z
  .object({
    id: z.string(),
    /** `validate`, `render` (planning), `render-chunk` or `finalize`. */
    kind: z.string(),
    state: z.enum(['queued', 'running', 'done', 'failed', 'canceled']),
    /** The frames of a render chunk; null for other kinds. */
    frames: z.array(z.int()).nullable(),
    /** Attempts started so far (1 on the first run; a retry adds one). */
    attempt: z.int().min(0),
    /** The worker (machine, process and slot) running it now, else the one that ran its latest attempt. */
    worker: z.string().nullable(),
    /** When the latest attempt started. */
    startedAt: DateTime.nullable(),
    /** When the task ended (done, failed or canceled). */
    finishedAt: DateTime.nullable(),
    /** Seconds of the latest attempt: until it ended, or until now while it runs. */
    durationSeconds: z.number().min(0).nullable(),
    /**
     * How it ended or why it is being retried: `done`, `canceled`, or the error. Null
     * while it has not ended nor failed.
     */
    exitReason: z.string().nullable(),
  })
  .meta({ id: 'JobTask' });
export type JobTask = z.infer<typeof JobTask>;

export const JobTaskList = z.object({ data: z.array(JobTask) }).meta({ id: 'JobTaskList' });
export type JobTaskList = z.infer<typeof JobTaskList>;

/**
 * The `data` of a `job` event of GET /events: the job as GET /jobs/{id} serves it and its
 * counters (null before the render produced any). Sent for each of the workspace's recent jobs
 * when the stream opens, then whenever one changes.
 */
export const JobEvent = z.object({ job: Job, progress: JobProgress.nullable() }).meta({ id: 'JobEvent' });
export type JobEvent = z.infer<typeof JobEvent>;

/** GET /events takes no parameters. */
export const EventsQuery = z.strictObject({});
