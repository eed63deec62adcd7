// What a warm Blender's failures mean as task outcomes (warm-render.ts runs the process): a setup
// error or a Blender `Error:` line is fatal (BLENDER_FAILED, the same on every try); a crash or a
// hang stays the run's own error (retryable), carrying the frame and the last lines.
import { BlenderCanceledError, BlenderExitError, BlenderFrameError, BlenderRunError } from '../../../blender/errors.js';
import type { Task } from '../../ports/tasks.js';
import { FatalTaskError } from '../runtime/outcomes.js';

/**
 * A load that failed, as the error to throw: `lastLines` are the process's, `setupErrors` what
 * render_setup.py could not apply. A canceled load stays a cancel.
 */
export function setupFailure(err: unknown, lastLines: readonly string[], setupErrors: string[]): unknown {
  if (err instanceof BlenderCanceledError) return err;
  const details = {
    attempts: 1,
    lastFrame: null,
    lastLines: lastLines.slice(-20),
    errors: setupErrors,
    ...(err instanceof BlenderExitError ? { exitCode: err.details.exitCode } : {}),
  };
  // A bad camera, scene, view layer or device, or a file Blender cannot read: the same on every try.
  if (setupErrors.length > 0 || (err instanceof BlenderExitError && lastLines.some((l) => /^Error: /.test(l)))) {
    const why = setupErrors[0] ?? lastLines.findLast((l) => /^Error: /.test(l)) ?? String((err as Error).message);
    return FatalTaskError.render('BLENDER_FAILED', `Blender failed: ${why}`, details);
  }
  if (err instanceof BlenderRunError) Object.assign(err.details, details);
  return err;
}

/**
 * A frame that failed, as a task outcome; the report names the attempt, the frame and the last
 * lines (the error's own, else `processLines`, the process's).
 */
export function frameFailure(
  err: unknown,
  task: Task,
  frame: number,
  errors: string[],
  processLines: readonly string[],
): unknown {
  const lastLines = ((err as { details?: { lastLines?: unknown } }).details?.lastLines as string[] | undefined) ?? [
    ...processLines,
  ];
  const details = { attempts: task.attempts, lastFrame: frame, lastLines: lastLines.slice(-20), errors };
  if (err instanceof BlenderFrameError || (err instanceof BlenderExitError && errors.length > 0)) {
    return FatalTaskError.render(
      'BLENDER_FAILED',
      `Blender failed at frame ${frame}: ${errors[0] ?? err.message}`,
      details,
    );
  }
  if (err instanceof BlenderRunError) Object.assign(err.details, details);
  return err;
}
