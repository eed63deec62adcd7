// The internal worker API against the real reference service: a worker on another machine reads
// and moves jobs only through it (RemoteWorkerJobs); a worker without the right token is refused
// and told what to fix; bad requests are answered 400; the token never reaches the logs.
// Failover across service URLs: worker-api-failover.test.ts; a real render: worker-api.test.ts.
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createWorkerToken } from '../../../service/domain/worker-tokens.js';
import { WorkerApiError } from '../../../service/worker-api/client.js';
import { WORKER_API_PREFIX } from '../../../service/worker-api/contract.js';
import { RemoteWorkerJobs } from '../../../service/worker-api/remote-jobs.js';
import type { JobProgress } from '../../../shared/api/progress.js';
import { API_KEY_PREFIX } from '../../../shared/constants.js';
import { waitUntil } from '../../helpers/e2e.js';
import { createJob } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { startTestService } from '../../helpers/service.js';
import { progressOf, TOKEN, workerApiHarness } from './worker-api-harness.js';

const h = workerApiHarness();

describe('RemoteWorkerJobs against the service', () => {
  it(
    'reads a job created through the public API and moves it created -> validating -> validated with patches; ' +
      'a stale move returns undefined',
    async () => {
      const { id } = await createJob(h.call);
      const read = await h.jobs.getById(id);
      expect(read?.job).toMatchObject({ id, status: 'created', workspaceId: h.svc.workspaceId });
      expect(read?.internal.sourceKey).toEqual(expect.any(String));
      expect(await h.jobs.getById(randomUUID())).toBeUndefined();

      const validating = await h.jobs.transition(
        id,
        ['created'],
        'validating',
        {},
        { validationConfig: { sceneToRender: 'Main' } },
      );
      expect(validating?.job.status).toBe('validating');
      expect(validating?.internal).toMatchObject({
        sourceKey: read?.internal.sourceKey,
        validationConfig: { sceneToRender: 'Main' },
      });
      const rootFolderId = randomUUID();
      const validated = await h.jobs.transition(id, ['validating'], 'validated', {
        rootFolderId,
        isAnalysisSkipped: true,
      });
      expect(validated?.job).toMatchObject({ status: 'validated', rootFolderId, isAnalysisSkipped: true });
      expect(await h.publicJob(id)).toMatchObject({ status: 'validated', rootFolderId, isAnalysisSkipped: true });

      expect(await h.jobs.transition(id, ['created'], 'validating')).toBeUndefined();
      expect(await h.jobs.transition(randomUUID(), ['created'], 'validating')).toBeUndefined();
      expect((await h.publicJob(id)).status).toBe('validated');
    },
  );

  it('update and setProgress show up in the public GET /jobs/{id} and its progress', async () => {
    const { id } = await createJob(h.call);
    const updated = await h.jobs.update(id, { normalizedSeconds: 12.5 });
    expect(updated?.job.normalizedSeconds).toBe(12.5);
    expect((await h.publicJob(id)).normalizedSeconds).toBe(12.5);
    expect(await h.jobs.update(randomUUID(), { normalizedSeconds: 1 })).toBeUndefined();

    await h.jobs.transition(id, ['created'], 'validating');
    await h.jobs.setProgress(progressOf(id));
    const r = await h.call<{ data: JobProgress }>('GET', `/jobs/${id}/progress`);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      jobId: id,
      status: 'validating',
      framesTotal: 10,
      framesDone: 3,
      percent: 32.5,
      etaSeconds: 20,
    });
  });

  it('completed() enqueues exactly one onRenderComplete delivery, however often it is called', async () => {
    const id = await h.completedJob();
    const rec = await h.jobs.getById(id);
    await h.jobs.completed(rec!);
    await h.jobs.completed(rec!);
    const deliveries = await h.svc.service.webhooks.listForJob(id);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.event).toMatchObject({
      event: 'onRenderComplete',
      jobId: id,
      status: 'completed',
      workspaceId: h.svc.workspaceId,
    });
    await waitUntil(
      'the webhook to be delivered',
      async () => (await h.svc.service.webhooks.getDelivery(deliveries[0]!.id))?.state === 'delivered',
      { timeoutMs: 15_000 },
    );

    // Only a completed job has a completion to report.
    const { id: open } = await createJob(h.call);
    const refused = await h.jobs.completed((await h.jobs.getById(open))!).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WorkerApiError);
    expect((refused as WorkerApiError).status).toBe(400);
    expect(String(refused)).toMatch(/"created", not completed/);
    expect(await h.svc.service.webhooks.listForJob(open)).toEqual([]);
  });
});

describe('authentication', () => {
  it.each([
    ['no token', null],
    ['a wrong token', `${TOKEN.slice(0, -1)}${TOKEN.endsWith('A') ? 'B' : 'A'}`],
    ['an API key', 'API_KEY'],
  ])('refuses %s with 401 and the error body', async (_n, token) => {
    const id = (await createJob(h.call)).id;
    for (const [method, route, body] of [
      ['GET', `/jobs/${id}`, undefined],
      ['POST', `/jobs/${id}/transition`, { from: ['created'], to: 'validating' }],
      ['PUT', `/jobs/${id}/progress`, progressOf(id)],
      ['POST', `/jobs/${id}/completed`, undefined],
    ] as const) {
      const r = await h.internal(method, route, body, { token: token === 'API_KEY' ? h.svc.apiKey : token });
      expect(r.status, `${method} ${route}`).toBe(401);
      const e = errorBody(r);
      expect(e.name).toBe('UNAUTHORIZED');
      expect(e.message).toMatch(/worker token/);
    }
    expect((await h.publicJob(id)).status).toBe('created');
  });

  it('tells a worker with the wrong token what to fix, without echoing the token', async () => {
    const wrong = `wrong-${randomBytes(16).toString('hex')}`;
    const err = await h
      .remote({ token: wrong })
      .getById(randomUUID())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkerApiError);
    expect(String(err)).toMatch(/401 UNAUTHORIZED.*RENDERBRIDGE_WORKER_TOKEN/);
    expect(String(err)).not.toContain(wrong);
  });

  it('the worker token does not work on the public API', async () => {
    const r = await api(h.svc.baseUrl, TOKEN)('GET', '/jobs');
    expect(r.status).toBe(401);
    expect(errorBody(r).name).toBe('UNAUTHORIZED');
  });

  it('without the farm-wide token the service still serves the worker API, to per-worker tokens only', async () => {
    const plain = await startTestService();
    try {
      const r = await h.internal('GET', `/jobs/${randomUUID()}`, undefined, { origin: plain.origin });
      expect(r.status).toBe(401);
      expect(errorBody(r).name).toBe('UNAUTHORIZED');
      const err = await new RemoteWorkerJobs({ serviceUrls: [plain.origin], token: TOKEN })
        .getById(randomUUID())
        .catch((e: unknown) => e);
      expect(String(err)).toMatch(
        /unknown or revoked; create this worker's own token with renderbridge admin create-worker-token/,
      );
      const { token } = await createWorkerToken(plain.service.ports.workerTokens, 'plain-1');
      expect(await new RemoteWorkerJobs({ serviceUrls: [plain.origin], token }).whoami()).toBe('plain-1');
      expect(await new RemoteWorkerJobs({ serviceUrls: [plain.origin], token }).getById(randomUUID())).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  it('the farm-wide token names no worker, and the service warns about it at start', async () => {
    expect(await h.jobs.whoami()).toBeNull();
    expect(h.svc.logs.join('')).toMatch(/deprecated farm-wide worker token.*create-worker-token/);
  });
});

describe('request validation', () => {
  it.each([
    ['an unknown status', 'transition', { from: ['created'], to: 'done' }],
    ['an empty from', 'transition', { from: [], to: 'validating' }],
    ['internal that is not an object', 'transition', { from: ['created'], to: 'validating', internal: [1, 2] }],
    ['a patch of the status', 'transition', { from: ['created'], to: 'validating', patch: { status: 'completed' } }],
    ['a patch of an unknown field', 'update', { patch: { colour: 'red' } }],
    ['a patch with a bad value', 'update', { patch: { rootFolderId: 'not-a-uuid' } }],
    ['no patch', 'update', {}],
    ['a move the state machine forbids', 'transition', { from: ['created'], to: 'completed' }],
  ])('answers 400 with the zod error body for %s', async (_n, route, body) => {
    const id = (await createJob(h.call)).id;
    const r = await h.internal('POST', `/jobs/${id}/${route}`, body);
    expect(r.status).toBe(400);
    expect(errorBody(r)).toMatchObject({ name: 'VALIDATION_ERROR', type: 'zod' });
    expect((await h.publicJob(id)).status).toBe('created');
  });

  it('answers 400 for a bad id, progress of another job, and a body that is not JSON', async () => {
    const id = (await createJob(h.call)).id;
    const badId = await h.internal('GET', '/jobs/not-a-uuid');
    expect([badId.status, errorBody(badId).name]).toEqual([400, 'VALIDATION_ERROR']);
    const other = await h.internal('PUT', `/jobs/${id}/progress`, progressOf(randomUUID()));
    expect(other.status).toBe(400);
    expect(errorBody(other).details[0]).toMatchObject({ code: 'job_id_mismatch', path: ['body', 'jobId'] });
    const badProgress = await h.internal('PUT', `/jobs/${id}/progress`, { ...progressOf(id), percent: 140 });
    expect(badProgress.status).toBe(400);
    const notJson = await h.internal('POST', `/jobs/${id}/transition`, undefined, { raw: '{"from": [' });
    expect([notJson.status, errorBody(notJson).name]).toEqual([400, 'INVALID_JSON']);
    const unknown = await h.internal('GET', `/jobs/${randomUUID()}`);
    expect([unknown.status, errorBody(unknown).name]).toEqual([404, 'JOB_NOT_FOUND']);
  });
});

describe('logs', () => {
  it('never contain the worker token, though the worker API calls are logged', () => {
    const all = h.svc.logs.join('');
    expect(all).toContain(`${WORKER_API_PREFIX}/jobs/`);
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain(TOKEN.slice(API_KEY_PREFIX.length));
    expect(h.hookHits).toBeGreaterThan(0);
  });
});
