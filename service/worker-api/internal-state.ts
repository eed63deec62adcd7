// What a worker may write into a job's service-only state (JobInternal), checked by the service
// whatever the worker sends: a strict schema of the fields workers set, and every storage key
// under the job's own output prefix. Without it a worker could point `outputs[].key` (or the
// preview) at any object, and the owner's download link would sign it.
import { z } from 'zod';
import { ValidationConfig } from '../../shared/api/job.js';
import { RequestedConfig } from '../../shared/api/render-config.js';
import { ApiError } from '../http/api-error.js';
import type { JobInternal } from '../ports/jobs.js';
import { jobOutputPrefix } from '../domain/output-keys.js';
import { TaskRequirements } from '../domain/tasks.js';
import { JobMemory } from '../domain/job-memory.js';

const text = z.string().max(4096);
/** Object keys: the fs storage's safe alphabet is checked on use; here only the shape and the prefix. */
const objectKey = z.string().min(1).max(1024);
const iso = z.iso.datetime({ offset: true });

const OutputFileWire = z.strictObject({
  key: objectKey,
  fileName: text,
  relativePath: text.optional(),
  view: text.nullable(),
  outputType: z.enum(['frame', 'composite']),
  compositeNodeName: text.optional(),
  size: z.number().int().min(0),
});

const VideoFileWire = z.strictObject({
  format: text,
  label: text.nullable(),
  key: objectKey.nullable(),
  fps: z.number().nullable(),
  segment: z.strictObject({ start: z.number(), end: z.number() }).nullable(),
});

/**
 * The JobInternal fields a worker writes (validation, render plan, outputs, kept frames). The
 * source (sourceKey, fileType, sourceFormat) and the requeue link are set by the service when the
 * job is made; a worker sending them is refused.
 */
export const WorkerInternalWire = z.strictObject({
  validationConfig: ValidationConfig.optional(),
  renderRequestedAt: iso.optional(),
  previewKey: objectKey.nullable().optional(),
  render: z
    .strictObject({
      blender: text,
      blenderVersion: z.string().max(32).optional(),
      chunkTaskIds: z.array(z.string().min(1).max(512)).max(100_000),
      frames: z.int().min(0),
      slots: z.int().min(0),
      copiedFrames: z.array(z.string().max(64)).max(100_000).optional(),
    })
    .optional(),
  keptUntil: iso.optional(),
  // Chunks held for the previews' approval (domain/preview-gate.ts): [index, start, end, step].
  previewHold: z
    .strictObject({
      chunks: z.array(z.tuple([z.int().min(0), z.int(), z.int(), z.int().min(1)])).max(100_000),
      requires: TaskRequirements,
    })
    .optional(),
  memory: JobMemory.optional(),
  // The estimate's measurements (worker/handlers/estimate-sample.ts);
  // its request is the service's, sent back unchanged.
  estimate: z
    .strictObject({
      requestedConfig: RequestedConfig,
      state: z.enum(['sampling', 'ready', 'failed', 'canceled']),
      startedAt: iso,
      finishedAt: iso.optional(),
      reason: text.optional(),
      frames: z.array(z.int()).max(1000).optional(),
      frameRanges: z.array(z.string().max(64)).max(100_000).optional(),
      samples: z
        .array(
          z.strictObject({
            frame: z.int(),
            seconds: z.number().min(0),
            peakMemoryBytes: z.number().min(0).nullable(),
            device: z.string().max(32),
          }),
        )
        .max(1000)
        .optional(),
      loadSeconds: z.array(z.number().min(0)).max(1000).optional(),
      warmupSeconds: z.array(z.number().min(0)).max(1000).optional(),
      callSeconds: z.array(z.number().min(0)).max(1000).optional(),
      prepareSeconds: z.array(z.number().min(0)).max(1000).optional(),
      outputBytes: z.array(z.number().min(0)).max(1000).optional(),
      ownSeconds: z.number().min(0).optional(),
      ownNormalizedSeconds: z.number().min(0).optional(),
      takenOver: z.boolean().optional(),
      blenderVersion: z.string().max(32).optional(),
    })
    .optional(),
  outputs: z
    .strictObject({
      frames: z.array(OutputFileWire).max(1_000_000),
      composites: z.array(OutputFileWire).max(1_000_000),
      framesZipKey: objectKey.nullable(),
      compositesZipKey: objectKey.nullable(),
      videos: z.array(VideoFileWire).max(10_000),
    })
    .optional(),
});

/** Every storage key in `internal` with where it sits in the body, for the prefix check. */
function keysOf(internal: z.infer<typeof WorkerInternalWire>): { key: string; path: string[] }[] {
  const found: { key: string; path: string[] }[] = [];
  const add = (key: string | null | undefined, path: string[]) => {
    if (key) found.push({ key, path });
  };
  add(internal.previewKey, ['previewKey']);
  const o = internal.outputs;
  if (o) {
    o.frames.forEach((f, i) => add(f.key, ['outputs', 'frames', String(i), 'key']));
    o.composites.forEach((f, i) => add(f.key, ['outputs', 'composites', String(i), 'key']));
    add(o.framesZipKey, ['outputs', 'framesZipKey']);
    add(o.compositesZipKey, ['outputs', 'compositesZipKey']);
    o.videos.forEach((v, i) => add(v.key, ['outputs', 'videos', String(i), 'key']));
  }
  return found;
}

/**
 * The internal state to store, or a 400 VALIDATION_ERROR naming each storage key that lies outside
 * the job's own output prefix (or climbs out of it with `..`).
 */
export function checkWorkerInternal(
  job: { id: string; workspaceId: string },
  internal: z.infer<typeof WorkerInternalWire>,
): Partial<JobInternal> {
  const prefix = `${jobOutputPrefix(job.workspaceId, job.id)}/`;
  const outside = keysOf(internal).filter(
    ({ key }) => !key.startsWith(prefix) || key.split('/').some((s) => s === '..' || s === '.' || s === ''),
  );
  if (outside.length > 0) {
    throw new ApiError('VALIDATION_ERROR', {
      message:
        `Storage keys in the job's internal state must lie under the job's own prefix "${prefix}": a worker ` +
        `stores a job's outputs only there.`,
      details: outside.slice(0, 20).map(({ path }) => ({
        code: 'key_outside_job',
        path: ['body', 'internal', ...path],
        message: `must start with "${prefix}"`,
      })),
    });
  }
  return internal as Partial<JobInternal>;
}
