// The body of GET /workers (extension workers): every worker process the farm heard from, its
// render slots and what each runs, its GPUs, Blender builds and last heartbeat, the jobs whose
// blocklist keeps it off, and the queue's open tasks by kind.
import { z } from 'zod';
import { DateTime } from './common.js';

const TaskKindName = z.enum(['validate', 'render', 'render-chunk', 'finalize']);

/**
 * A task a slot holds. Another workspace's task shows only its kind: `jobId`, `jobName`,
 * `taskId` and `frames` are null.
 */
export const WorkerSlotTask = z
  .object({
    kind: TaskKindName,
    jobId: z.string().nullable(),
    /** The job's scene file name, for people. */
    jobName: z.string().nullable(),
    taskId: z.string().nullable(),
    frames: z.array(z.int()).nullable(),
    startedAt: DateTime,
  })
  .meta({ id: 'WorkerSlotTask' });

export const WorkerSlot = z
  .object({
    /** `control` (validation, planning, finalize), `cpu-<n>` or `gpu-<uuid>`. */
    id: z.string(),
    device: z.object({ kind: z.enum(['cpu', 'gpu', 'control']), name: z.string(), uuid: z.string().nullable() }),
    /**
     * `loading`: its Blender is loading a scene; `busy`: it runs a task; `idle`. A lost or
     * stopped worker's slots are idle.
     */
    state: z.enum(['idle', 'busy', 'loading']),
    /** The running task first; a warm slot may hold a second one, queued in Blender. */
    tasks: z.array(WorkerSlotTask),
    /** The job whose scene its warm Blender holds (null when none, or another workspace's). */
    warmJobId: z.string().nullable(),
    /**
     * Memory a frame may use in this slot, bytes: VRAM for a GPU slot, RAM for a CPU slot (the
     * worker's --slot-memory, else the machine's). Absent for the control lane and older workers.
     */
    memoryBytes: z.number().min(0).optional(),
  })
  .meta({ id: 'WorkerSlot' });

export const WorkerInfo = z
  .object({
    /** `<name>:<pid>`: one per worker process. */
    id: z.string(),
    /** The name the per-job blocklist and metrics know it by. */
    name: z.string(),
    /** The machine's host name: only in the operator's view (`renderbridge admin workers`), never to an API key. */
    hostname: z.string().optional(),
    version: z.string(),
    /** `lost`: no heartbeat for 3 of its periods (it died or cannot reach the service); `stopped`: it said it stops. */
    state: z.enum(['running', 'lost', 'stopped']),
    startedAt: DateTime,
    lastHeartbeatAt: DateTime,
    /** Seconds since the last heartbeat, by the service's clock. */
    secondsSinceHeartbeat: z.number().min(0),
    heartbeatIntervalSeconds: z.number().positive(),
    slots: z.array(WorkerSlot),
    gpus: z.array(z.object({ name: z.string(), uuid: z.string(), memoryMiB: z.number() })),
    /**
     * False when the worker's operator turned the Blender sandbox off (--no-sandbox);
     * absent from workers that do not say.
     */
    sandbox: z.boolean().optional(),
    builds: z.array(
      z.object({
        version: z.string(),
        /** Where the build lies on the worker: only in the operator's view, never to an API key. */
        path: z.string().optional(),
        /** An executable, an unpacked release folder, or a system root run in bubblewrap. */
        kind: z.enum(['executable', 'release', 'root']).optional(),
      }),
    ),
    /** The machine's memory as the worker sees it (its cgroup's limit, else the RAM); absent from older workers. */
    memoryBytes: z.number().min(0).optional(),
    /** The worker's tags (`gpu:a4000`, `site:paris`); a render request's `requiredTags` must all be among them. */
    tags: z.array(z.string()).optional(),
    /** Jobs of the workspace whose per-job blocklist keeps slots of this worker off them now. */
    blocklistedBy: z.array(
      z.object({ jobId: z.string(), jobName: z.string().nullable(), slots: z.array(z.string()), failures: z.int() }),
    ),
  })
  .meta({ id: 'WorkerInfo' });
export type WorkerInfo = z.infer<typeof WorkerInfo>;

export const WorkerList = z
  .object({
    data: z.object({
      /** Running ones first, then by most recent heartbeat; workers silent for a day are forgotten. */
      workers: z.array(WorkerInfo),
      /** Open tasks of the whole farm by kind (every workspace: counts only). */
      queue: z.array(z.object({ kind: TaskKindName, queued: z.int().min(0), running: z.int().min(0) })),
      generatedAt: DateTime,
    }),
  })
  .meta({ id: 'WorkerList' });
export type WorkerList = z.infer<typeof WorkerList>;
