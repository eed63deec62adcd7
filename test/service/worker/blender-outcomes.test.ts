// blender/'s errors know nothing of tasks; asTaskOutcome (service/worker/outcomes.ts) is where the
// worker decides what each means. Clients see the same failedReason as when runBlender and the
// analysis threw task outcomes themselves.
import { describe, expect, it } from 'vitest';
import {
  BlenderCanceledError,
  BlenderCrashError,
  BlenderFileUnreadableError,
  BlenderResultError,
  BlenderStartError,
  BlenderTimeoutError,
  unreadableFile,
} from '../../../blender/errors.js';
import type { Task } from '../../../service/ports/tasks.js';
import {
  asTaskOutcome,
  CanceledTaskError,
  FatalTaskError,
  RetryableTaskError,
} from '../../../service/worker/runtime/outcomes.js';
import { failedReasonOf } from '../../../service/worker/runtime/failed-reason.js';

const argv = ['-b', '-Y', '--factory-startup', '-noaudio', '/w/scene.blend'];
const run = { argv, exitCode: null, signal: 'SIGTERM', durationMs: 6012, lastLines: ['Fra:3 Mem:12M', 'WORKING'] };
const task: Task = { id: 'job-1:render:1', jobId: 'job-1', kind: 'render', payload: {}, attempts: 3 };

describe('asTaskOutcome: blender errors as task outcomes', () => {
  it('a canceled run is a canceled task, with the same message', () => {
    const err = new BlenderCanceledError('Blender stopped: task canceled');
    const outcome = asTaskOutcome(err);
    expect(outcome).toBeInstanceOf(CanceledTaskError);
    expect((outcome as CanceledTaskError).message).toBe('Blender stopped: task canceled');
    expect((outcome as CanceledTaskError).cause).toBe(err);
  });

  it.each([
    [
      'a start failure',
      new BlenderStartError(
        'cannot start Blender (/no/blender): ENOENT',
        { argv },
        { cause: Object.assign(new Error('spawn'), { code: 'ENOENT' }) },
      ),
    ],
    ['a timeout', new BlenderTimeoutError('Blender timed out after 6000 ms', { ...run, reason: 'timeout' })],
    ['an idle stop', new BlenderTimeoutError('Blender printed nothing for 4000 ms', { ...run, reason: 'idle' })],
    ['a crash', new BlenderCrashError('Blender crashed (SIGKILL)', { ...run, signal: 'SIGKILL', reason: 'crash' })],
    [
      'a missing result',
      new BlenderResultError('scene analysis wrote no readable result', { exitCode: 0, lastLines: ['x'] }),
    ],
    [
      'an unreadable version',
      new BlenderResultError('cannot read the version of /b/blender', { exitCode: 1, lastLines: [] }),
    ],
  ])('%s is retried with the same message and details', (_what, err) => {
    const outcome = asTaskOutcome(err);
    expect(outcome).toBeInstanceOf(RetryableTaskError);
    expect((outcome as RetryableTaskError).message).toBe(err.message);
    expect((outcome as RetryableTaskError).details).toBe(err.details);
    expect((outcome as RetryableTaskError).cause).toBe(err);
  });

  it('details the render task adds to a run error reach the failedReason, argv stays on the worker', () => {
    const err = new BlenderCrashError('Blender crashed (SIGKILL)', { ...run, signal: 'SIGKILL', reason: 'crash' });
    // What render/chunk-run.ts does before rethrowing: the attempt, the frame reached, the last lines.
    Object.assign(err.details, { attempts: 3, lastFrame: 3, lastLines: run.lastLines });
    const reason = failedReasonOf(asTaskOutcome(err), task);
    expect(reason).toMatchObject({
      name: 'RETRIES_EXHAUSTED',
      type: 'RENDER_FAILED',
      errorDetails: {
        message: 'Blender crashed (SIGKILL) (gave up after 3 attempts)',
        attempts: 3,
        lastFrame: 3,
        lastLines: run.lastLines,
        reason: 'crash',
        signal: 'SIGKILL',
      },
    });
    expect(reason.errorDetails.argv).toBeUndefined();
  });

  it('a file Blender cannot open fails validation as SCENE_FILE_UNREADABLE with its last lines', () => {
    const err = unreadableFile('broken.blend', { lastLines: ['Error: File format is not supported'] });
    expect(err).toBeInstanceOf(BlenderFileUnreadableError);
    const outcome = asTaskOutcome(err);
    expect(outcome).toBeInstanceOf(FatalTaskError);
    expect((outcome as FatalTaskError).failedReason).toEqual({
      name: 'SCENE_FILE_UNREADABLE',
      type: 'VALIDATION_FAILED',
      errorDetails: {
        message:
          'Blender cannot open broken.blend: it is damaged, not a .blend file, or saved by a much newer Blender.',
        lastLines: ['Error: File format is not supported'],
      },
    });
    expect((outcome as FatalTaskError).cause).toBe(err);
  });

  it('leaves errors of other origins as they are', () => {
    const err = new Error('bug');
    expect(asTaskOutcome(err)).toBe(err);
    const fatal = FatalTaskError.render('BLENDER_FAILED', 'Blender failed at frame 3: boom');
    expect(asTaskOutcome(fatal)).toBe(fatal);
  });
});
