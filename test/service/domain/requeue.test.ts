// The requeue rules (service/domain/requeue.ts): which ended jobs may be requeued, what a frame
// selection means and its canonical key, and the new job made from an old one.
import { describe, expect, it } from 'vitest';
import { newJobRecord } from '../../../service/domain/jobs.js';
import { newRequeuedRecord, planRequeue } from '../../../service/domain/requeue.js';
import type { JobRecord } from '../../../service/ports/jobs.js';

function job(status: JobRecord['job']['status'], frameRanges?: string[]): JobRecord {
  const rec = newJobRecord(
    {
      slug: 'up_1',
      workspaceId: 'ws',
      userId: 'u',
      fileName: 'shot.blend',
      fileType: 'blend',
      objectKey: 'uploads/ws/up_1/shot.blend',
      expiresAt: '',
      createdAt: '',
      completedAt: '',
      size: 5,
      sha256: null,
      jobId: null,
    },
    undefined,
  );
  rec.job.status = status;
  if (frameRanges) {
    rec.job.requestedConfig = { frameRanges, sampleCount: 4 };
    rec.internal.renderRequestedAt = '2026-01-01T00:00:00Z';
    rec.internal.validationConfig = { pathToFileForRender: 'shot.blend' };
  }
  return rec;
}

describe('planRequeue', () => {
  it('takes failed and canceled jobs with or without frames, completed ones only with frames', () => {
    expect(planRequeue(job('failed', ['1-10']), {})).toEqual({ ok: true, rerender: null, selection: '' });
    expect(planRequeue(job('canceled'), {})).toMatchObject({ ok: true, selection: '' });
    expect(planRequeue(job('completed', ['1-10']), {})).toEqual({
      ok: false,
      error: 'JOB_NOT_REQUEUEABLE',
      status: 'completed',
    });
    for (const s of ['created', 'validating', 'validated', 'booting', 'rendering', 'finalizing'] as const) {
      expect(planRequeue(job(s, ['1-10']), { frames: '1' }), s).toMatchObject({
        ok: false,
        error: 'JOB_NOT_REQUEUEABLE',
        status: s,
      });
    }
  });

  it('gives one key to the same frames however they are spelt', () => {
    const rec = job('completed', ['1-10']);
    const a = planRequeue(rec, { frames: '1-3, 5,7' });
    const b = planRequeue(rec, { frames: ['7', '5', '2-3', '1'] });
    expect(a).toEqual({ ok: true, rerender: ['1-3', '5-7x2'], selection: '1-3,5-7x2' });
    expect(b).toEqual(a);
  });

  it("refuses frames outside the job, naming them and the job's own, and frames of a job that never chose any", () => {
    const outside = planRequeue(job('failed', ['1-10x3']), { frames: '2-4' });
    expect(outside).toMatchObject({
      ok: false,
      error: 'VALIDATION_ERROR',
      details: [{ path: ['body', 'frames'], message: 'Frames outside this job: 2-3; choose among 1-10x3.' }],
    });
    expect(planRequeue(job('canceled'), { frames: '1' })).toMatchObject({
      ok: false,
      error: 'VALIDATION_ERROR',
      details: [{ code: 'frames_unknown' }],
    });
    expect(planRequeue(job('failed', ['1-10']), { frames: '9-3' })).toMatchObject({
      ok: false,
      error: 'VALIDATION_ERROR',
    });
  });
});

describe('newRequeuedRecord', () => {
  it(
    'makes a fresh job of the same workspace, user and stored project, carrying the old request to render ' +
      'after validation',
    () => {
      const old = job('failed', ['1-4']);
      const rec = newRequeuedRecord(old, ['2']);
      expect(rec.job).toMatchObject({
        status: 'created',
        workspaceId: 'ws',
        userId: 'u',
        failedReason: null,
        finalConfig: null,
        analysis: null,
        normalizedSeconds: 0,
      });
      expect(rec.job.id).not.toBe(old.job.id);
      expect(rec.job.sceneFile?.name).toBe('shot.blend');
      expect(rec.internal).toEqual({
        sourceKey: 'uploads/ws/up_1/shot.blend',
        fileType: 'blend',
        validationConfig: { pathToFileForRender: 'shot.blend' },
        requeue: { fromJobId: old.job.id, requestedConfig: { frameRanges: ['1-4'], sampleCount: 4 }, rerender: ['2'] },
      });
      // A job that never asked for a render: the new one waits in `validated` for POST /render.
      expect(newRequeuedRecord(job('canceled'), null).internal.requeue?.requestedConfig).toBeNull();
      // A requeue canceled before its render started passes on the request it carried.
      const canceled = { ...rec, job: { ...rec.job, status: 'canceled' as const } };
      expect(newRequeuedRecord(canceled, null).internal.requeue).toEqual({
        fromJobId: rec.job.id,
        requestedConfig: { frameRanges: ['1-4'], sampleCount: 4 },
        rerender: null,
      });
    },
  );
});
