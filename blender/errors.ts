// What can go wrong when running Blender, in Blender's own terms. blender/ knows nothing of tasks
// or packs: the worker (service/worker/outcomes.ts, asTaskOutcome) and the daemon (daemon/trace.ts)
// each decide what these mean for them. `details` is for logs and failure reports; it is a plain
// object that callers may add to (the render task adds the attempt and the frame reached).

/** The run was canceled through its AbortSignal, before Blender started or while it ran. */
export class BlenderCanceledError extends Error {
  override readonly name = 'BlenderCanceledError';
}

/** A Blender error that carries details for logs and reports. */
export abstract class BlenderError extends Error {
  readonly details: Record<string, unknown>;

  constructor(message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.details = details;
  }
}

/**
 * The run itself went wrong, whatever Blender was asked to do: it could not start, was stopped
 * (timeout, no output) or died of a signal. Worth another try, maybe on another machine.
 */
export abstract class BlenderRunError extends BlenderError {}

/** Blender could not be started (no such binary, not executable); `cause` is the spawn error. Details: argv. */
export class BlenderStartError extends BlenderRunError {
  override readonly name = 'BlenderStartError';
}

/**
 * Blender was stopped for running too long (`reason: 'timeout'`) or printing nothing for too long
 * (`reason: 'idle'`). Details: argv, exitCode, signal, durationMs, lastLines, reason.
 */
export class BlenderTimeoutError extends BlenderRunError {
  override readonly name = 'BlenderTimeoutError';
}

/**
 * Blender died of a signal (a crash, the OOM killer). Details: argv, exitCode, signal,
 * durationMs, lastLines, reason 'crash'.
 */
export class BlenderCrashError extends BlenderRunError {
  override readonly name = 'BlenderCrashError';
}

/**
 * Blender ran, but a script's result is missing or unusable: the script raised, wrote nothing
 * readable, or Blender printed no version. May be transient (a full disk, a flaky build).
 */
export class BlenderResultError extends BlenderError {
  override readonly name = 'BlenderResultError';
}

/**
 * Blender cannot open the .blend: damaged, not a .blend file, or saved by a much newer Blender. The same on every try.
 */
export class BlenderFileUnreadableError extends BlenderError {
  override readonly name = 'BlenderFileUnreadableError';
}

/** Blender's messages when it cannot load a file (3.x/4.x wording). */
export const UNREADABLE_FILE_LINE =
  /Cannot read file|File format is not supported|not a blend file|Failed to read blend file|Unable to open/i;

/** The error for a file Blender cannot open, named as the user knows it (`shownName`). */
export function unreadableFile(shownName: string, details: Record<string, unknown>): BlenderFileUnreadableError {
  return new BlenderFileUnreadableError(
    `Blender cannot open ${shownName}: it is damaged, not a .blend file, or saved by a much newer Blender.`,
    details,
  );
}

/**
 * A long-lived Blender (the warm render loop) exited on its own, without a signal, while it loaded
 * the scene or rendered a frame: a Python error in the loop, or Blender giving up. Details: argv,
 * exitCode, durationMs, lastLines, and `frame` when it died rendering one.
 */
export class BlenderExitError extends BlenderRunError {
  override readonly name = 'BlenderExitError';
}

/**
 * Blender rendered a frame and reported it failed (`RB_FRAME_ERROR`: the render operator raised,
 * e.g. no camera). Deterministic: the same on every try. Details: frame, lastLines.
 */
export class BlenderFrameError extends BlenderError {
  override readonly name = 'BlenderFrameError';
}

/**
 * A frame handed to a long-lived Blender that ended before beginning it (it crashed on the frame
 * before, or was stopped). Nothing of the frame was rendered: it is for another process to do,
 * and no attempt of its own failed. Details: frame.
 */
export class FrameNotStartedError extends BlenderError {
  override readonly name = 'FrameNotStartedError';
}
