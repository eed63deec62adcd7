// The scheduling extension through the real service: the render request's `scheduling`, the
// job's `scheduling` field, the priority, pause, resume and approve routes, and the checks of
// `dependsOn`. The test plays the worker (moving jobs through the ports), as the other API tests do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Job, JobEnvelope } from '../../../shared/api/job.js';
import { ExtensionList } from '../../../shared/extensions.js';
import { createJob, type Call } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { moveJob, startTestService, type TestService } from '../../helpers/service.js';

let svc: TestService;
let call: Call;

beforeAll(async () => {
  svc = await startTestService();
  call = api(svc.baseUrl, svc.apiKey);
});
afterAll(() => svc.close());

const CONFIG = { colorManagementPreset: 'default' } as const;

async function validatedJob(c: Call = call): Promise<Job> {
  const job = await createJob(c);
  expect((await c('POST', `/jobs/${job.id}/validate`, {})).status).toBe(202);
  await moveJob(svc, job.id, ['validating', 'validated']);
  return job;
}

async function getJob(id: string): Promise<Job> {
  return JobEnvelope.parse((await call('GET', `/jobs/${id}`)).body).data;
}

/** Claims every claimable render task, as planning lanes would; the jobs they belong to. */
async function claimRenders(): Promise<string[]> {
  const jobs: string[] = [];
  for (;;) {
    const t = await svc.service.ports.queue.claim('test-worker', ['render'], 60_000);
    if (!t) return jobs;
    jobs.push(t.jobId);
  }
}

describe('scheduling extension', () => {
  it('is listed by GET /extensions with its routes', async () => {
    const list = ExtensionList.parse((await call('GET', '/extensions')).body);
    const ext = list.data.extensions.find((e) => e.name === 'scheduling');
    expect(ext?.routes.sort()).toEqual([
      'approvePreviews',
      'getFarmShare',
      'getJobQueueAhead',
      'pauseJob',
      'resumeJob',
      'setJobPriority',
    ]);
  });

  it('gives a spec-only render the defaults: priority 50, previews first, waiting for nothing', async () => {
    const job = await validatedJob();
    expect((await call('POST', `/jobs/${job.id}/render`, { requestedRenderConfig: CONFIG })).status).toBe(202);
    const got = await getJob(job.id);
    expect(got.status).toBe('booting');
    expect(got.scheduling).toEqual({
      priority: 50,
      paused: false,
      dependsOn: [],
      waitingFor: [],
      previewFrames: true,
      previews: null,
    });
    expect(await claimRenders()).toContain(job.id);
  });

  it('stores the request: priority, no previews, and an approval gate that implies previews', async () => {
    const a = await validatedJob();
    const r = await call('POST', `/jobs/${a.id}/render`, {
      requestedRenderConfig: CONFIG,
      scheduling: { priority: 90, previewFrames: false },
    });
    expect(r.status).toBe(202);
    expect(Job.parse(r.body).scheduling).toMatchObject({ priority: 90, previewFrames: false, previews: null });
    const b = await validatedJob();
    await call('POST', `/jobs/${b.id}/render`, {
      requestedRenderConfig: CONFIG,
      scheduling: { previewFrames: false, approvePreviews: true },
    });
    expect((await getJob(b.id)).scheduling).toMatchObject({
      previewFrames: true,
      previews: { frames: [], gate: 'waiting' },
    });
  });

  it('refuses a priority out of 0-100 and unknown scheduling fields with 400', async () => {
    const job = await validatedJob();
    for (const scheduling of [{ priority: 101 }, { priority: -1 }, { priority: 1.5 }, { urgent: true }]) {
      const r = await call('POST', `/jobs/${job.id}/render`, { requestedRenderConfig: CONFIG, scheduling });
      expect(r.status, JSON.stringify(scheduling)).toBe(400);
      expect(errorBody(r).name).toBe('VALIDATION_ERROR');
    }
    const bad = await call('POST', `/jobs/${job.id}/priority`, { priority: 1000 });
    expect(bad.status).toBe(400);
  });

  it('pauses a job (its tasks are not claimed), resumes it, and changes its priority', async () => {
    const job = await validatedJob();
    const paused = await call('POST', `/jobs/${job.id}/pause`);
    expect(paused.status).toBe(200);
    expect(JobEnvelope.parse(paused.body).data.scheduling?.paused).toBe(true);
    // Paused before its render: the render keeps it paused, and its planning task waits.
    await call('POST', `/jobs/${job.id}/render`, { requestedRenderConfig: CONFIG });
    expect((await getJob(job.id)).scheduling?.paused).toBe(true);
    expect(await claimRenders()).not.toContain(job.id);
    const prio = await call('POST', `/jobs/${job.id}/priority`, { priority: 75 });
    expect(prio.status).toBe(200);
    expect(JobEnvelope.parse(prio.body).data.scheduling).toMatchObject({ priority: 75, paused: true });
    const resumed = await call('POST', `/jobs/${job.id}/resume`);
    expect(JobEnvelope.parse(resumed.body).data.scheduling?.paused).toBe(false);
    expect(await claimRenders()).toContain(job.id);
    // A repeat changes nothing.
    expect((await call('POST', `/jobs/${job.id}/resume`)).status).toBe(200);
  });

  it('answers 409 JOB_ALREADY_FINISHED for a finished job and 404 for another workspace', async () => {
    const job = await validatedJob();
    expect((await call('POST', `/jobs/${job.id}/cancel`)).status).toBe(200);
    for (const [path, body] of [
      ['priority', { priority: 10 }],
      ['pause', undefined],
      ['resume', undefined],
      ['approve-previews', undefined],
    ] as const) {
      const r = await call('POST', `/jobs/${job.id}/${path}`, body);
      expect(r.status, path).toBe(409);
      expect(errorBody(r).name, path).toBe('JOB_ALREADY_FINISHED');
      expect(errorBody(r).metadata.status).toBe('canceled');
    }
    const other = api(svc.baseUrl, await svc.createApiKey('other-studio'));
    const r = await other('POST', `/jobs/${job.id}/pause`);
    expect(r.status).toBe(404);
    expect(errorBody(r).name).toBe('JOB_NOT_FOUND');
  });

  it('answers 409 PREVIEW_APPROVAL_NOT_PENDING without a gate, and approves a gated job once', async () => {
    const plain = await validatedJob();
    await call('POST', `/jobs/${plain.id}/render`, { requestedRenderConfig: CONFIG });
    const r = await call('POST', `/jobs/${plain.id}/approve-previews`);
    expect(r.status).toBe(409);
    expect(errorBody(r).name).toBe('PREVIEW_APPROVAL_NOT_PENDING');
    const gated = await validatedJob();
    await call('POST', `/jobs/${gated.id}/render`, {
      requestedRenderConfig: CONFIG,
      scheduling: { approvePreviews: true },
    });
    for (let i = 0; i < 2; i++) {
      const ok = await call('POST', `/jobs/${gated.id}/approve-previews`);
      expect(ok.status).toBe(200);
      expect(JobEnvelope.parse(ok.body).data.scheduling?.previews?.gate).toBe('approved');
    }
  });
});

describe('dependsOn', () => {
  it('waits visibly for the jobs not completed, and not for completed ones', async () => {
    const done = await validatedJob();
    await call('POST', `/jobs/${done.id}/render`, { requestedRenderConfig: CONFIG });
    await moveJob(svc, done.id, ['booting', 'rendering', 'finalizing', 'completed']);
    const pending = await validatedJob();
    const job = await validatedJob();
    const r = await call('POST', `/jobs/${job.id}/render`, {
      requestedRenderConfig: CONFIG,
      scheduling: { dependsOn: [done.id, pending.id] },
    });
    expect(r.status).toBe(202);
    const got = await getJob(job.id);
    expect(got.status).toBe('booting');
    expect(got.scheduling).toMatchObject({ dependsOn: [done.id, pending.id], waitingFor: [pending.id] });
  });

  it('answers 404 DEPENDENCY_NOT_FOUND for an unknown id and for another workspace alike', async () => {
    const other = api(svc.baseUrl, await svc.createApiKey('elsewhere'));
    const theirs = await createJob(other);
    for (const dep of [theirs.id, '00000000-0000-4000-8000-000000000000']) {
      const job = await validatedJob();
      const r = await call('POST', `/jobs/${job.id}/render`, {
        requestedRenderConfig: CONFIG,
        scheduling: { dependsOn: [dep] },
      });
      expect(r.status).toBe(404);
      expect(errorBody(r).name).toBe('DEPENDENCY_NOT_FOUND');
      expect(errorBody(r).metadata.dependencyId).toBe(dep);
      // Refused before anything moved: the job can still render.
      expect((await getJob(job.id)).status).toBe('validated');
    }
  });

  it('answers 409 DEPENDENCY_FAILED when a named job already failed or was canceled', async () => {
    const canceled = await validatedJob();
    await call('POST', `/jobs/${canceled.id}/cancel`);
    const job = await validatedJob();
    const r = await call('POST', `/jobs/${job.id}/render`, {
      requestedRenderConfig: CONFIG,
      scheduling: { dependsOn: [canceled.id] },
    });
    expect(r.status).toBe(409);
    expect(errorBody(r).name).toBe('DEPENDENCY_FAILED');
    expect(errorBody(r).metadata).toMatchObject({ dependencyId: canceled.id, dependencyStatus: 'canceled' });
  });

  it('refuses cycles with 409 DEPENDENCY_CYCLE, itself included', async () => {
    const a = await validatedJob();
    const b = await validatedJob();
    const c = await validatedJob();
    const self = await call('POST', `/jobs/${a.id}/render`, {
      requestedRenderConfig: CONFIG,
      scheduling: { dependsOn: [a.id] },
    });
    expect(errorBody(self).name).toBe('DEPENDENCY_CYCLE');
    // a waits for b, b for c: c waiting for a closes the loop.
    for (const [job, dep] of [
      [a, b],
      [b, c],
    ] as const) {
      const r = await call('POST', `/jobs/${job.id}/render`, {
        requestedRenderConfig: CONFIG,
        scheduling: { dependsOn: [dep.id] },
      });
      expect(r.status).toBe(202);
    }
    const r = await call('POST', `/jobs/${c.id}/render`, {
      requestedRenderConfig: CONFIG,
      scheduling: { dependsOn: [a.id] },
    });
    expect(r.status).toBe(409);
    expect(errorBody(r).name).toBe('DEPENDENCY_CYCLE');
    expect(errorBody(r).metadata.cycle).toEqual([c.id, a.id, b.id, c.id]);
  });
});
