// Requeue rules (job-requeue extension): which ended jobs may be requeued, what a frame selection
// means, and the new job made from an old one. The spec keeps `failed`, `canceled` and
// `completed` final, so a requeue is always a new job, validated again like any other.
import { randomUUID } from 'node:crypto';
import type { ErrorDetail } from '../../shared/api/error-body.js';
import type { RequeueBody } from '../../shared/api/requeue.js';
import type { JobStatus } from '../../shared/job-status.js';
import type { JobRecord } from '../ports/jobs.js';
import { expandFrameRanges, formatFrameRanges } from './frame-ranges.js';
import { parseFrameRange, selectFrames, splitSelection } from './frame-selection.js';
import { createdJobFields, slugOfUploadKey } from './jobs.js';

/** What a requeue of this job renders, or why it cannot be requeued. */
export type RequeuePlan =
  | { ok: true; rerender: string[] | null; selection: string }
  | { ok: false; error: 'JOB_NOT_REQUEUEABLE'; status: JobStatus }
  | { ok: false; error: 'VALIDATION_ERROR'; details: ErrorDetail[] };

const FRAMES_PATH = ['body', 'frames'];

/** Frames outside the job named in a refusal; the rest are counted. */
const OUTSIDE_NAMED = 1000;

/** The frames a job renders: its final config's once planned, else those it asked for; undefined when it never said. */
export function framesOfJob(rec: JobRecord): number[] | undefined {
  const ranges = rec.job.finalConfig?.frameRanges ?? rec.job.requestedConfig?.frameRanges;
  return ranges?.length ? expandFrameRanges(ranges) : undefined;
}

/** The body's `frames` as frame ranges (an array as is, a string split at its commas). */
function rangesOf(frames: RequeueBody['frames']): string[] | undefined {
  if (frames === undefined) return undefined;
  return typeof frames === 'string' ? frames.split(',').map((r) => r.trim()) : frames;
}

/**
 * Checks a requeue request against the job. A failed or canceled job may be requeued with or
 * without frames; a completed one only with the frames to render again. `selection` is the
 * canonical form of the frames ('' for none): the key that makes a repeat answer the same job.
 */
export function planRequeue(rec: JobRecord, body: RequeueBody): RequeuePlan {
  const status = rec.job.status;
  const ranges = rangesOf(body.frames);
  if (status !== 'failed' && status !== 'canceled' && !(status === 'completed' && ranges)) {
    return { ok: false, error: 'JOB_NOT_REQUEUEABLE', status };
  }
  if (!ranges) return { ok: true, rerender: null, selection: '' };
  const own = framesOfJob(rec);
  if (!own) {
    return {
      ok: false,
      error: 'VALIDATION_ERROR',
      details: [
        {
          code: 'frames_unknown',
          path: FRAMES_PATH,
          message:
            'This job never asked for a render, so it has no frames to choose from: requeue it without "frames".',
        },
      ],
    };
  }
  // On intervals (frame-selection.ts): a requeue naming every frame 100 times costs the ranges
  // and the job's own frames, not a walk of the frame space.
  let split: ReturnType<typeof splitSelection>;
  try {
    split = splitSelection(selectFrames(ranges.map(parseFrameRange)), own, OUTSIDE_NAMED);
  } catch (err) {
    const why = err instanceof RangeError ? `${err.message}: ` : '';
    return {
      ok: false,
      error: 'VALIDATION_ERROR',
      details: [
        {
          code: 'frames_outside',
          path: FRAMES_PATH,
          message: `${why}choose frames of this job: ${formatFrameRanges(own).join(',')}.`,
        },
      ],
    };
  }
  const { inside: asked, outsideCount, outsideFirst: outside } = split;
  if (outsideCount > 0) {
    const more = outsideCount > outside.length ? ` and ${outsideCount - outside.length} more` : '';
    return {
      ok: false,
      error: 'VALIDATION_ERROR',
      details: [
        {
          code: 'frames_outside',
          path: FRAMES_PATH,
          message:
            `Frames outside this job: ${formatFrameRanges(outside).join(',')}${more}; choose among ` +
            `${formatFrameRanges(own).join(',')}.`,
        },
      ],
    };
  }
  const rerender = formatFrameRanges(asked);
  return { ok: true, rerender, selection: rerender.join(',') };
}

/** The upload whose stored project a job renders (its blobs stay alive while the new job runs). */
export function uploadSlugOf(rec: JobRecord): string | null {
  return slugOfUploadKey(rec.internal.sourceKey) ?? null;
}

/**
 * The new job: same workspace, user and stored project, in `created`, to be validated again with
 * the old job's validation config and then rendered with its request (when it made one).
 */
export function newRequeuedRecord(old: JobRecord, rerender: string[] | null): JobRecord {
  const now = new Date().toISOString();
  const rootFolderId = randomUUID();
  const o = old.job;
  return {
    job: {
      ...createdJobFields(o, now, rootFolderId),
      projectId: o.projectId ?? null,
      uploadPreflight: o.uploadPreflight ?? null,
      ...(o.sceneFile
        ? {
            sceneFile: {
              ...o.sceneFile,
              id: randomUUID(),
              parentId: rootFolderId,
              rootFolderId,
              createdAt: now,
              updatedAt: now,
            },
          }
        : {}),
    },
    internal: {
      sourceKey: old.internal.sourceKey,
      fileType: old.internal.fileType,
      ...(old.internal.sourceFormat ? { sourceFormat: old.internal.sourceFormat } : {}),
      ...(old.internal.validationConfig ? { validationConfig: old.internal.validationConfig } : {}),
      requeue: {
        fromJobId: o.id,
        // A requeue that ended before its render started passes on the request it carried.
        requestedConfig:
          old.internal.renderRequestedAt && o.requestedConfig
            ? o.requestedConfig
            : (old.internal.requeue?.requestedConfig ?? null),
        rerender,
      },
    },
  };
}
