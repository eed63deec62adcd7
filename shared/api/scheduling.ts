// The scheduling extension's shapes: what a render request may add (priority, preview frames
// first with an optional approval gate, jobs to wait for), and the job's `scheduling` field that
// GET /jobs/{id} shows. A spec-only client sends none of it and reads none of it: its job renders
// at the default priority, previews first, waiting for nothing, exactly as before.
import { z } from 'zod';
import { Uuid } from './common.js';
import { StartRenderBody } from './render-config.js';

/** Priorities run 0-100; a job without one gets the middle, so others can go both above and below it. */
export const PRIORITY_MIN = 0;
export const PRIORITY_MAX = 100;
export const DEFAULT_PRIORITY = 50;
/** More than a studio's shot sequence needs, few enough to check for cycles on every render. */
export const MAX_DEPENDENCIES = 50;

export const Priority = z.int().min(PRIORITY_MIN).max(PRIORITY_MAX).describe('0-100, higher claimed first; default 50');

/** A worker tag (`gpu:a4000`, `site:paris`): a letter or digit, then letters, digits and `._:/-`, 64 at most. */
export const WORKER_TAG_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;
/** More tags than a pool needs (GPU model, memory class, site), few enough to show in one line. */
export const MAX_REQUIRED_TAGS = 16;
export const WorkerTag = z.string().regex(WORKER_TAG_PATTERN).describe('a worker tag, e.g. gpu:a4000 or site:paris');

/** `scheduling` of `POST /jobs/{id}/render` (extension scheduling). Every field is optional. */
export const SchedulingRequest = z
  .strictObject({
    /** Default 50. A higher-priority job's frames are claimed before a lower one's; running frames finish. */
    priority: Priority.optional(),
    /** Default true: the first, last and middle frames render before the rest. */
    previewFrames: z.boolean().optional(),
    /**
     * Default false: the rest renders right after the previews. True: the job waits after them for
     * POST /jobs/{id}/approve-previews (implies previewFrames).
     */
    approvePreviews: z.boolean().optional(),
    /** Default none. Jobs of this workspace to wait for: the render starts once every one is `completed`. */
    dependsOn: z.array(Uuid).max(MAX_DEPENDENCIES).optional(),
    /** Default none. Worker tags the job's frames need: only workers with every one of them render it. */
    requiredTags: z.array(WorkerTag).max(MAX_REQUIRED_TAGS).optional(),
  })
  .meta({ id: 'SchedulingRequest' });
export type SchedulingRequest = z.infer<typeof SchedulingRequest>;

/** Where the approval gate of a job's preview frames stands. */
export const PreviewGate = z.enum(['none', 'waiting', 'approved']);
export type PreviewGate = z.infer<typeof PreviewGate>;

/**
 * The job's `scheduling` (extension scheduling), set when its render is asked for. The status stays
 * a spec status (a job waiting for its dependencies or its approval is `booting` or `rendering`);
 * this field says why it waits.
 */
export const JobScheduling = z
  .object({
    priority: Priority,
    /** True from POST /jobs/{id}/pause until resume: no new frame is claimed, running frames finish. */
    paused: z.boolean(),
    /** The jobs the request named. */
    dependsOn: z.array(Uuid),
    /** Of those, the ones not `completed` yet: the render starts when this is empty. */
    waitingFor: z.array(Uuid),
    /** Whether the previews render first (the request's previewFrames). */
    previewFrames: z.boolean(),
    /** The preview frames once the render is planned (null before, or without previews). */
    previews: z
      .object({
        frames: z.array(z.int()),
        /** `waiting`: the other frames wait for POST /jobs/{id}/approve-previews. */
        gate: PreviewGate,
      })
      .nullable(),
    /** The worker tags the request required (absent: none). */
    requiredTags: z.array(z.string()).optional(),
  })
  .meta({ id: 'JobScheduling' });
export type JobScheduling = z.infer<typeof JobScheduling>;

export const SetPriorityBody = z.strictObject({ priority: Priority }).meta({ id: 'SetPriorityBody' });
export type SetPriorityBody = z.infer<typeof SetPriorityBody>;

/** `POST /jobs/{id}/render`'s body: the spec's, plus `scheduling` (extension scheduling; absent: the defaults). */
export const RenderJobBody = StartRenderBody.extend({ scheduling: SchedulingRequest.optional() }).meta({
  id: 'RenderJobBody',
});
export type RenderJobBody = z.infer<typeof RenderJobBody>;
