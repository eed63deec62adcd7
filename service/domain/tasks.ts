// The tasks of a job, once: their ids (derived from the job, so a repeated enqueue adds nothing)
// and a zod schema per kind for the payload. Whoever enqueues builds the task here; whoever runs
// it reads the payload through `taskPayload`, so a payload of the wrong shape (a worker of
// another version, a hand-edited row) is refused by name instead of read as `undefined`.
import { z } from 'zod';
import type { Task, TaskKind } from '../ports/tasks.js';

/** Requirements a task carries so that only a fitting worker takes it. */
export const TaskRequirements = z.object({
  /** `major.minor` of the Blender build the job was routed to (a worker needs a build of it). */
  blender: z.string().optional(),
  /**
   * `major.minor` of the Blender that saved the scene: a worker needs a build that opens it (see
   * blender/version-routing.ts). Set when the worker handing the task on cannot see the farm's builds.
   */
  opens: z.string().optional(),
  /** The job's `minimumRam` in GiB: machines with less memory leave its chunks to others. */
  minimumRamGiB: z.number().positive().optional(),
});
export type TaskRequirements = z.infer<typeof TaskRequirements>;

/** Validation and planning run anywhere, or, handed on for a Blender version, where it is. */
const Routed = z.object({ requires: TaskRequirements.optional() });

export const ChunkPayload = z.object({
  index: z.int().min(0),
  start: z.int(),
  end: z.int(),
  step: z.int().min(1),
  frames: z.array(z.int()).min(1),
  requires: TaskRequirements.optional(),
});
export type ChunkPayload = z.infer<typeof ChunkPayload>;

/** The payload schema of each kind. Unknown keys are kept (a newer planner may add some). */
export const TASK_PAYLOADS = {
  validate: Routed,
  render: Routed,
  'render-chunk': ChunkPayload,
  finalize: z.object({}),
} as const satisfies Record<TaskKind, z.ZodType>;
export type TaskPayload<K extends TaskKind> = z.infer<(typeof TASK_PAYLOADS)[K]>;

export const taskIds = {
  validate: (jobId: string) => `validate:${jobId}`,
  render: (jobId: string) => `render:${jobId}`,
  chunk: (jobId: string, index: number) => `chunk:${jobId}:${index}`,
  finalize: (jobId: string) => `finalize:${jobId}`,
};

/** What TaskQueue.enqueue takes. */
export interface NewTask {
  id: string;
  jobId: string;
  kind: TaskKind;
  payload?: Record<string, unknown>;
  after?: readonly string[];
  /** The job's priority (extension scheduling), higher claimed first. Default: the queue's (0). */
  priority?: number;
  /** The job's fair-share group, `<workspaceId>/<userId>` (domain/scheduling.ts). Default: none. */
  shareGroup?: string;
}

/** `5.2` -> `blender-5_2`: task ids hold no dots. */
const routedSuffix = (r: TaskRequirements) =>
  (r.blender ? `blender-${r.blender}` : `opens-${r.opens ?? 'any'}`).replace(/\./g, '_');

export const newTasks = {
  validate: (jobId: string): NewTask => ({ id: taskIds.validate(jobId), jobId, kind: 'validate' }),
  render: (jobId: string): NewTask => ({ id: taskIds.render(jobId), jobId, kind: 'render' }),
  /**
   * The same validation or planning, handed on to a worker that has the Blender the file needs.
   * Its id names the requirement, so handing on twice adds nothing.
   */
  routed: (kind: 'validate' | 'render', jobId: string, requires: TaskRequirements): NewTask => ({
    id: `${taskIds[kind](jobId)}:${routedSuffix(requires)}`,
    jobId,
    kind,
    payload: { requires: TaskRequirements.parse(requires) },
  }),
  chunk: (jobId: string, payload: ChunkPayload): NewTask => ({
    id: taskIds.chunk(jobId, payload.index),
    jobId,
    kind: 'render-chunk',
    payload: ChunkPayload.parse(payload),
  }),
  /** Held back by the queue until every task in `after` is done. */
  finalize: (jobId: string, after: readonly string[]): NewTask => ({
    id: taskIds.finalize(jobId),
    jobId,
    kind: 'finalize',
    after,
  }),
};

export class BadTaskPayloadError extends Error {
  constructor(
    readonly task: Pick<Task, 'id' | 'kind'>,
    readonly issues: string,
  ) {
    super(`task ${task.id} (${task.kind}) has a payload this worker cannot read: ${issues}`);
    this.name = 'BadTaskPayloadError';
  }
}

/** The task's payload, checked against its kind's schema. */
export function taskPayload<K extends TaskKind>(task: Task & { kind: K }): TaskPayload<K> {
  const r = (TASK_PAYLOADS[task.kind] as z.ZodType).safeParse(task.payload);
  if (!r.success) throw new BadTaskPayloadError(task, z.prettifyError(r.error));
  return r.data as TaskPayload<K>;
}
