// Typed outcomes of a worker task. The task loop maps them onto the queue and the job:
// RetryableTaskError -> `queue.fail(..., { retryable: true })` (the task runs again later),
// FatalTaskError -> job `failed` with its `failedReason`, CanceledTaskError -> nothing to report
// (the job was canceled by someone else). Anything else thrown is a bug: treat it as retryable
// a bounded number of times, then fatal with type INTERNAL_ERROR.
import type { FailedReason } from '../../../shared/api/job.js';
import { BlendHeaderError } from '../../../blender/blend-header.js';
import { BlenderCanceledError, BlenderError, BlenderFileUnreadableError } from '../../../blender/errors.js';
import { DiskSpaceError, UnpackAbortedError, UnpackError } from '../../../zip/errors.js';
import { BlobIntegrityError } from '../project/blob-integrity.js';

/** Why a task might succeed on a second try: a crash, a hang or timeout, a transient I/O error. */
export class RetryableTaskError extends Error {
  override readonly name = 'RetryableTaskError';
  /** Extra context for logs (exit code, signal, Blender's last lines); never shown to clients as is. */
  readonly details: Record<string, unknown>;

  constructor(message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.details = details;
  }
}

/**
 * A task that will fail again whatever we do: bad input, a file Blender cannot open, a validation
 * failure. Carries the client-facing `failedReason` (spec shape: `{name, type, errorDetails}`).
 */
export class FatalTaskError extends Error {
  override readonly name = 'FatalTaskError';
  readonly failedReason: FailedReason;

  constructor(failedReason: FailedReason, options?: { cause?: unknown }) {
    const message =
      typeof failedReason.errorDetails.message === 'string' ? failedReason.errorDetails.message : failedReason.name;
    super(message, options);
    this.failedReason = failedReason;
  }

  /** Shorthand for the common `VALIDATION_FAILED` case; `details` lands in `errorDetails` beside `message`. */
  static validation(name: string, message: string, details: Record<string, unknown> = {}): FatalTaskError {
    return new FatalTaskError({ name, type: 'VALIDATION_FAILED', errorDetails: { message, ...details } });
  }

  /** Shorthand for `RENDER_FAILED`. */
  static render(name: string, message: string, details: Record<string, unknown> = {}): FatalTaskError {
    return new FatalTaskError({ name, type: 'RENDER_FAILED', errorDetails: { message, ...details } });
  }
}

/** The task stopped because it was canceled (AbortSignal fired); not a failure of the job. */
export class CanceledTaskError extends Error {
  override readonly name = 'CanceledTaskError';

  constructor(message = 'task canceled', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Not yet: the task waits for something outside it (a render for the jobs it depends on). It is
 * handed back to the queue, claimable again after `delayMs`, and the attempt does not count, so a
 * wait of hours spends no retries. `waitFor` (default none): jobs whose end makes it claimable at
 * once (TaskLeases.release), `delayMs` being then only the safety net.
 */
export class DeferTaskError extends Error {
  override readonly name = 'DeferTaskError';

  constructor(
    readonly delayMs: number,
    message = 'task deferred',
    readonly waitFor: readonly string[] = [],
  ) {
    super(message);
  }
}

/** True for errors the queue should retry. Unknown errors count as retryable: a bug may be transient. */
export function isRetryable(err: unknown): boolean {
  return !(err instanceof FatalTaskError) && !(err instanceof CanceledTaskError);
}

/**
 * The errors of the packages the worker uses (zip/ for unpacking, blender/ for running Blender)
 * as task outcomes. Those packages throw their own errors and know nothing of tasks; this is the
 * one place that decides what each means for a task. Anything else is returned as it is.
 */
export function asTaskOutcome(err: unknown): unknown {
  // zip/ errors: a refusal is the upload's fault (fatal, with the refusal's code as its name); too
  // little disk is this machine's (retried, maybe elsewhere); an abort is a cancellation.
  if (err instanceof UnpackError) {
    return new FatalTaskError(
      {
        name: err.code,
        type: 'VALIDATION_FAILED',
        errorDetails: { message: err.message, code: err.code, ...err.details },
      },
      { cause: err },
    );
  }
  if (err instanceof DiskSpaceError) return new RetryableTaskError(err.message, err.details, { cause: err });
  if (err instanceof UnpackAbortedError)
    return err.reason instanceof CanceledTaskError ? err.reason : new CanceledTaskError(undefined, { cause: err });
  // A blob project's blob whose stored bytes do not match: the service verified it, so storage or
  // the transfer is at fault, not the upload; another read (or machine) may get good bytes, and
  // one damaged for good fails the job when the attempts are spent (RETRIES_EXHAUSTED).
  if (err instanceof BlobIntegrityError) return new RetryableTaskError(err.message, err.details, { cause: err });
  // blender/ errors: a canceled run is a canceled task; a run that could not start, was stopped or
  // crashed, or gave no usable result may work on another try; a file Blender cannot open never will.
  if (err instanceof BlenderCanceledError) return new CanceledTaskError(err.message, { cause: err });
  if (err instanceof BlenderFileUnreadableError) {
    return new FatalTaskError(
      {
        name: 'SCENE_FILE_UNREADABLE',
        type: 'VALIDATION_FAILED',
        errorDetails: { message: err.message, ...err.details },
      },
      { cause: err },
    );
  }
  // Not a .blend by its first bytes: no Blender will open it either.
  if (err instanceof BlendHeaderError) {
    return new FatalTaskError(
      {
        name: 'SCENE_FILE_UNREADABLE',
        type: 'VALIDATION_FAILED',
        errorDetails: { message: `${err.message}: save the scene again in Blender and upload that file.` },
      },
      { cause: err },
    );
  }
  if (err instanceof BlenderError) return new RetryableTaskError(err.message, err.details, { cause: err });
  return err;
}
