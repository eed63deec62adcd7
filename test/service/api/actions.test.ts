import { describe, expect, it } from 'vitest';
import { Job, JobEnvelope } from '../../../shared/api/job.js';
import type { JobStatus } from '../../../shared/job-status.js';
import { MOVES, moveJob, type MoveName } from '../../../service/domain/job-lifecycle.js';
import { createJob } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { startTestService, useTestService } from '../../helpers/service.js';

const used = useTestService();
const { call } = used;

const RENDER = { requestedRenderConfig: { colorManagementPreset: 'default' } };

/** Moves a job along as the worker runtime would (it is the only other writer of job state). */
async function workerMoves(id: string, path: JobStatus[]): Promise<void> {
  for (let i = 1; i < path.length; i++) {
    const moved = await used.svc.service.ports.jobs.transition(id, [path[i - 1]!], path[i]!);
    if (!moved) throw new Error(`could not move ${id} ${path[i - 1]} -> ${path[i]}`);
  }
}

async function validatedJob(): Promise<Job> {
  const job = await createJob(call);
  expect((await call('POST', `/jobs/${job.id}/validate`, {})).status).toBe(202);
  await workerMoves(job.id, ['validating', 'validated']);
  return job;
}

async function status(id: string): Promise<JobStatus> {
  return JobEnvelope.parse((await call('GET', `/jobs/${id}`)).body).data.status;
}

describe('POST /jobs/{id}/validate', () => {
  it('moves created -> validating, answers 202 with the job, and queues one validate task', async () => {
    const job = await createJob(call);
    const r = await call('POST', `/jobs/${job.id}/validate`, {
      validationConfig: { pathToFileForRender: 'scene.blend', sceneToRender: 'Scene' },
    });
    expect(r.status).toBe(202);
    expect(Job.parse(r.body).status).toBe('validating');
    const task = await used.svc.service.ports.queue.claim('test-worker', ['validate'], 60_000);
    expect(task?.jobId).toBe(job.id);
    const rec = await used.svc.service.ports.jobs.getById(job.id);
    expect(rec?.internal.validationConfig).toEqual({ pathToFileForRender: 'scene.blend', sceneToRender: 'Scene' });
  });

  it('accepts a POST without a body as {}', async () => {
    const job = await createJob(call);
    const r = await fetch(`${used.svc.baseUrl}/jobs/${job.id}/validate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${used.svc.apiKey}` },
    });
    expect(r.status).toBe(202);
  });

  it('rejects validate on validating and on validated with 400 (rule 2)', async () => {
    const job = await createJob(call);
    await call('POST', `/jobs/${job.id}/validate`, {});
    const again = await call('POST', `/jobs/${job.id}/validate`, {});
    expect(again.status).toBe(400);
    expect(errorBody(again).name).toBe('VALIDATE_NOT_ALLOWED');
    expect(errorBody(again).metadata.status).toBe('validating');
    await workerMoves(job.id, ['validating', 'validated']);
    const third = await call('POST', `/jobs/${job.id}/validate`, {});
    expect(third.status).toBe(400);
    expect(errorBody(third).metadata.status).toBe('validated');
  });

  it('lets exactly one of several simultaneous validate calls through', async () => {
    const job = await createJob(call);
    const rs = await Promise.all([1, 2, 3, 4].map(() => call('POST', `/jobs/${job.id}/validate`, {})));
    expect(rs.map((r) => r.status).sort()).toEqual([202, 400, 400, 400]);
  });

  it.each([
    ['unknown field', { validationConfig: { sceneToRender: 'S', extra: 1 } }],
    ['ill-typed scene', { validationConfig: { sceneToRender: 3 } }],
    ['array body', []],
  ])('refuses %s with 400', async (_n, body) => {
    const job = await createJob(call);
    const r = await call('POST', `/jobs/${job.id}/validate`, body);
    expect(r.status).toBe(400);
    expect(await status(job.id)).toBe('created');
  });
});

describe('POST /jobs/{id}/render', () => {
  it('starts a validated job: 202, booting, requestedConfig echoed, one render task queued', async () => {
    const job = await validatedJob();
    const cfg = {
      colorManagementPreset: 'default',
      frameRanges: ['1-10', '20-30x2'],
      outputFormat: 'PNG',
      videoOutput: true,
    };
    const r = await call('POST', `/jobs/${job.id}/render`, { requestedRenderConfig: cfg });
    expect(r.status).toBe(202);
    expect(r.headers.get('x-idempotent-replay')).toBeNull();
    const started = Job.parse(r.body);
    expect(started.status).toBe('booting');
    expect(started.requestedConfig).toEqual(cfg);
    expect((await used.svc.service.ports.queue.counts()).queued).toBeGreaterThan(0);
  });

  it('answers a repeated render with 200, the current job and X-Idempotent-Replay: true', async () => {
    const job = await validatedJob();
    await call('POST', `/jobs/${job.id}/render`, RENDER);
    await workerMoves(job.id, ['booting', 'rendering']);
    const again = await call('POST', `/jobs/${job.id}/render`, {
      requestedRenderConfig: { colorManagementPreset: 'aces' },
    });
    expect(again.status).toBe(200);
    expect(again.headers.get('x-idempotent-replay')).toBe('true');
    const j = Job.parse(again.body);
    expect(j.status).toBe('rendering');
    expect(j.requestedConfig?.colorManagementPreset).toBe('default');
  });

  it('turns simultaneous first calls into one start and replays', async () => {
    const job = await validatedJob();
    const rs = await Promise.all([1, 2, 3].map(() => call('POST', `/jobs/${job.id}/render`, RENDER)));
    expect(rs.map((r) => r.status).sort()).toEqual([200, 200, 202]);
  });

  it.each(['created', 'validating'] as const)('refuses render while %s with 409 RENDER_NOT_ALLOWED', async (state) => {
    const job = await createJob(call);
    if (state === 'validating') await call('POST', `/jobs/${job.id}/validate`, {});
    const r = await call('POST', `/jobs/${job.id}/render`, RENDER);
    expect(r.status).toBe(409);
    expect(errorBody(r).name).toBe('RENDER_NOT_ALLOWED');
    expect(errorBody(r).metadata.status).toBe(state);
  });

  it.each([
    ['missing requestedRenderConfig', {}],
    ['empty requestedRenderConfig', { requestedRenderConfig: {} }],
    ['null requestedRenderConfig', { requestedRenderConfig: null }],
    ['wrong-case preset', { requestedRenderConfig: { colorManagementPreset: 'DEFAULT' } }],
    ['wrong-case engine', { requestedRenderConfig: { colorManagementPreset: 'default', renderEngine: 'cycles' } }],
    ['misspelt field', { requestedRenderConfig: { colorManagementPreset: 'default', framRanges: ['1-2'] } }],
    ['bad frame range', { requestedRenderConfig: { colorManagementPreset: 'default', frameRanges: ['10-1'] } }],
    ['zero samples', { requestedRenderConfig: { colorManagementPreset: 'default', sampleCount: 0 } }],
    ['bad resolution', { requestedRenderConfig: { colorManagementPreset: 'default', resolution: [1920] } }],
    [
      'colorDepth as number',
      { requestedRenderConfig: { colorManagementPreset: 'default', outputSettings: { colorDepth: 8 } } },
    ],
  ])('refuses %s with 400 and leaves the job validated', async (_n, body) => {
    const job = await validatedJob();
    const r = await call('POST', `/jobs/${job.id}/render`, body);
    expect(r.status).toBe(400);
    expect(errorBody(r).type).toBe('zod');
    expect(await status(job.id)).toBe('validated');
  });

  it('refuses a camera or view layer the analysis did not find, naming the valid ones', async () => {
    const job = await validatedJob();
    await used.svc.service.ports.jobs.update(job.id, {
      analysis: {
        id: job.id,
        fsNodeId: 'n',
        type: 'scene_file',
        status: 'completed',
        config: {},
        output: {
          sceneCameras: [{ objectName: 'CamA', dataName: 'CamA', type: 'PERSP', isSavedActive: true }],
          viewLayers: [{ name: 'ViewLayer', use: true, isActive: true }],
        },
        startedAt: null,
        finishedAt: null,
        deletedAt: null,
        createdAt: job.createdAt,
        updatedAt: job.createdAt,
      },
    });
    const r = await call('POST', `/jobs/${job.id}/render`, {
      requestedRenderConfig: { colorManagementPreset: 'default', activeCamera: 'CamZ', activeViewLayer: 'Nope' },
    });
    expect(r.status).toBe(400);
    const e = errorBody(r);
    expect(e.details.map((d) => d.code)).toEqual(['unknown_camera', 'unknown_view_layer']);
    expect(e.details[0]!.message).toContain('CamA');
    const ok = await call('POST', `/jobs/${job.id}/render`, {
      requestedRenderConfig: { colorManagementPreset: 'default', activeCamera: 'CamA', activeViewLayer: 'ViewLayer' },
    });
    expect(ok.status).toBe(202);
  });
});

describe('POST /jobs/{id}/cancel', () => {
  it.each(['created', 'validating', 'validated', 'booting', 'rendering', 'finalizing'] as const)(
    'cancels a job in %s, drops its queued tasks, and it stays canceled',
    async (state) => {
      const job = await createJob(call);
      const path: JobStatus[] = ['created', 'validating', 'validated', 'booting', 'rendering', 'finalizing'];
      const upto = path.slice(0, path.indexOf(state) + 1);
      if (upto.length > 1) await call('POST', `/jobs/${job.id}/validate`, {});
      await workerMoves(job.id, upto.slice(1));
      const r = await call('POST', `/jobs/${job.id}/cancel`);
      expect(r.status).toBe(200);
      expect(Job.parse(r.body).status).toBe('canceled');
      const claimable: string[] = [];
      for (
        let t = await used.svc.service.ports.queue.claim('w', ['validate', 'render'], 60_000);
        t;
        t = await used.svc.service.ports.queue.claim('w', ['validate', 'render'], 60_000)
      ) {
        claimable.push(t.jobId);
      }
      expect(claimable).not.toContain(job.id);
      // A canceled job stays canceled: nothing moves it, and clients must stop.
      for (const move of Object.keys(MOVES) as MoveName[])
        expect(await moveJob(used.svc.service.ports.jobs, job.id, move), move).toBeUndefined();
      expect((await call('POST', `/jobs/${job.id}/validate`, {})).status).toBe(400);
      expect((await call('POST', `/jobs/${job.id}/render`, RENDER)).status).toBe(409);
      expect(await status(job.id)).toBe('canceled');
    },
  );

  it.each([
    ['completed', ['validating', 'validated', 'booting', 'rendering', 'finalizing', 'completed']],
    ['failed', ['validating', 'failed']],
    ['canceled', []],
  ] as const)('refuses cancel of a %s job with 409 CANCEL_NOT_ALLOWED', async (final, path) => {
    const job = await createJob(call);
    if (final === 'canceled') await call('POST', `/jobs/${job.id}/cancel`);
    else {
      await call('POST', `/jobs/${job.id}/validate`, {});
      await workerMoves(job.id, path as unknown as JobStatus[]);
    }
    const r = await call('POST', `/jobs/${job.id}/cancel`);
    expect(r.status).toBe(409);
    expect(errorBody(r).name).toBe('CANCEL_NOT_ALLOWED');
    expect(await status(job.id)).toBe(final);
  });
});

describe('restart', () => {
  it('keeps jobs, uploads and queued tasks across a restart', async () => {
    const first = await startTestService();
    const dataDir = first.dataDir;
    const c1 = api(first.baseUrl, first.apiKey);
    const job = await createJob(c1);
    await c1('POST', `/jobs/${job.id}/validate`, {});
    await first.stop();

    // Same data folder and, on the scale stack, the same database, queue and bucket.
    const { databaseUrl, redisUrl, queuePrefix, s3 } = first.config;
    const second = await startTestService({ dataDir, databaseUrl, redisUrl, queuePrefix, s3 });
    try {
      const c2 = api(second.baseUrl, first.apiKey);
      expect((await c2('GET', `/jobs/${job.id}`)).status).toBe(200);
      expect(await second.service.ports.queue.claim('w', ['validate'], 1000)).toMatchObject({
        jobId: job.id,
        kind: 'validate',
      });
    } finally {
      await second.close();
      await first.close();
    }
  });
});
