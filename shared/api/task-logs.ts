// Bodies of the task-logs extension: GET /jobs/{id}/logs (text) and its index GET /jobs/{id}/logs/index.
import { z } from 'zod';

/** Task ids as GET /jobs/{id}/tasks lists them (`chunk:<job id>:3`). */
const TaskId = z
  .string()
  .min(3)
  .max(200)
  .regex(/^[a-z][a-z-]*:[A-Za-z0-9:_-]{1,190}$/, 'a task id as GET /jobs/{id}/tasks lists it, e.g. chunk:<job id>:3');

export const TaskLogQuery = z.strictObject({
  /** Only this task's attempts. */
  task: TaskId.optional(),
  /** Only this attempt (1 is the first run); with `task`. */
  attempt: z.coerce.number().int().min(1).max(1000).optional(),
  /**
   * `true`: keep the response open and send new bytes of running attempts (and new tasks and
   * attempts) until the job has ended.
   */
  follow: z.enum(['true', 'false']).optional(),
});
export type TaskLogQuery = z.input<typeof TaskLogQuery>;

export const TaskLogIndexQuery = z.strictObject({ task: TaskId.optional() });

/** GET /jobs/{id}/logs: plain text, each run of each task under a `==> task ... <==` header line. */
export const TaskLogText = z.string().meta({
  id: 'TaskLogText',
  description:
    'Each run of each task attempt under a header line `==> task ID (KIND, frames F), attempt N, worker W: ' +
    'STATE <==`, then its timestamped lines.',
});

export const TaskLogAttempt = z
  .object({
    attempt: z.int().min(1),
    /** Unique per run: an attempt handed back untouched (a worker stopping) runs again under the same number. */
    runId: z.string(),
    /** The worker slot that ran it (`host/lane`); null when its start record is missing. */
    worker: z.string().nullable(),
    startedAt: z.string().nullable(),
    endedAt: z.string().nullable(),
    /**
     * done, failed, retried, canceled, released; `running` while it runs; `interrupted` when its worker
     * stopped writing without ending it.
     */
    state: z.string(),
    /** True while the log is stored as live segments (running, or interrupted). */
    live: z.boolean(),
    /** Bytes stored now (the capped log, or the live segments). */
    storedBytes: z.int().min(0),
    /** Bytes the run wrote in all; known once it ended, else the end of its last segment. */
    totalBytes: z.int().min(0),
    /** Bytes left out between the head and the tail. */
    omittedBytes: z.int().min(0),
  })
  .meta({ id: 'TaskLogAttempt' });

export const TaskLogTask = z
  .object({
    id: z.string(),
    kind: z.string(),
    /** queued, running, done, failed, canceled; null when the queue no longer lists the task. */
    state: z.string().nullable(),
    frames: z.array(z.int()).nullable(),
    attempts: z.array(TaskLogAttempt),
  })
  .meta({ id: 'TaskLogTask' });
export type TaskLogTask = z.infer<typeof TaskLogTask>;

export const TaskLogIndex = z
  .object({ data: z.object({ jobId: z.string(), tasks: z.array(TaskLogTask) }) })
  .meta({ id: 'TaskLogIndex' });
export type TaskLogIndex = z.infer<typeof TaskLogIndex>;
