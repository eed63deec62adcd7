// zip/'s errors know nothing of tasks; asTaskOutcome (service/worker/outcomes.ts) is where the
// worker decides what each means. Clients see the same failedReason as when UnpackError was
// itself a FatalTaskError.
import { describe, expect, it } from 'vitest';
import {
  asTaskOutcome,
  CanceledTaskError,
  FatalTaskError,
  RetryableTaskError,
} from '../../../service/worker/runtime/outcomes.js';
import { DiskSpaceError, UnpackAbortedError, UnpackError } from '../../../zip/errors.js';

describe('asTaskOutcome: zip errors as task outcomes', () => {
  it('a refusal fails the job: its code is the name, message, code and details the errorDetails', () => {
    const err = new UnpackError('ZIP_PATH_TRAVERSAL', 'The archive entry "../evil" was refused: ".." segment.', {
      entry: '../evil',
    });
    const outcome = asTaskOutcome(err);
    expect(outcome).toBeInstanceOf(FatalTaskError);
    expect((outcome as FatalTaskError).failedReason).toEqual({
      name: 'ZIP_PATH_TRAVERSAL',
      type: 'VALIDATION_FAILED',
      errorDetails: {
        message: 'The archive entry "../evil" was refused: ".." segment.',
        code: 'ZIP_PATH_TRAVERSAL',
        entry: '../evil',
      },
    });
    expect((outcome as FatalTaskError).message).toBe(err.message);
    expect((outcome as FatalTaskError).cause).toBe(err);
  });

  it('a refusal without details still names its code', () => {
    const outcome = asTaskOutcome(
      new UnpackError('ZIP_BAD_MANIFEST', 'renderbridge-manifest.json is not valid JSON.'),
    ) as FatalTaskError;
    expect(outcome.failedReason).toEqual({
      name: 'ZIP_BAD_MANIFEST',
      type: 'VALIDATION_FAILED',
      errorDetails: { message: 'renderbridge-manifest.json is not valid JSON.', code: 'ZIP_BAD_MANIFEST' },
    });
  });

  it('too little disk is retried, with the sizes for the logs', () => {
    const outcome = asTaskOutcome(new DiskSpaceError(500, 2000, 100));
    expect(outcome).toBeInstanceOf(RetryableTaskError);
    expect((outcome as RetryableTaskError).message).toBe(
      "The worker's disk has 500 bytes free; unpacking this project needs 2000 bytes and keeps 100 bytes " +
        "free for the render. Free space in the worker's work folder; the task is retried.",
    );
    expect((outcome as RetryableTaskError).details).toEqual({
      code: 'WORKER_DISK_FULL',
      freeBytes: 500,
      neededBytes: 2000,
      minFreeBytes: 100,
    });
  });

  it('an abort is a cancellation: the runtime reason itself when it is one, else a new one', () => {
    const reason = new CanceledTaskError('job canceled');
    expect(asTaskOutcome(new UnpackAbortedError(reason))).toBe(reason);
    const other = asTaskOutcome(new UnpackAbortedError(new Error('shutting down')));
    expect(other).toBeInstanceOf(CanceledTaskError);
    expect(asTaskOutcome(new UnpackAbortedError(undefined))).toBeInstanceOf(CanceledTaskError);
  });

  it('leaves other errors as they are', () => {
    const io = Object.assign(new Error('EIO'), { syscall: 'read' });
    expect(asTaskOutcome(io)).toBe(io);
  });
});
