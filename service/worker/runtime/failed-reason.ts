// What a job's failedReason says when a task fails for good, and the worker's own folders taken
// out of what clients see.
import type { FailedReason } from '../../../shared/api/job.js';
import type { Task } from '../../ports/tasks.js';
import { FatalTaskError, RetryableTaskError } from './outcomes.js';

/** The client-facing reason: a FatalTaskError's own, or a retryable error that ran out of attempts. */
export function failedReasonOf(err: unknown, task: Task): FailedReason {
  if (err instanceof FatalTaskError) return err.failedReason;
  const type = task.kind === 'validate' ? 'VALIDATION_FAILED' : 'RENDER_FAILED';
  // Blender's argv is for logs only: a client acts on the frame reached and the last lines.
  const { argv: _argv, ...details } = err instanceof RetryableTaskError ? err.details : {};
  return {
    name: err instanceof RetryableTaskError ? 'RETRIES_EXHAUSTED' : 'INTERNAL_ERROR',
    type,
    errorDetails: {
      message: `${err instanceof Error ? err.message : String(err)} (gave up after ${task.attempts} attempts)`,
      ...details,
      attempts: task.attempts,
    },
  };
}

/** `value` with every occurrence of the given folders replaced by `<worker>` (deeply, strings only). */
export function redactPaths<T>(value: T, paths: readonly string[]): T {
  const folders = paths.filter((p) => p.length > 1).sort((a, b) => b.length - a.length);
  if (folders.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return folders.reduce((text, p) => text.split(p).join('<worker>'), v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}
