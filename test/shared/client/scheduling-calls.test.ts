// The scheduling extension's typed calls against the real service: render with `scheduling`,
// then priority, pause, resume and approve through RenderJobClient, and its typed errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../../shared/client/client.js';
import { ApiError } from '../../../shared/client/errors.js';
import { createJob } from '../../helpers/flow.js';
import { api } from '../../helpers/http.js';
import { moveJob, startTestService, type TestService } from '../../helpers/service.js';

let svc: TestService;
let client: RenderJobClient;

beforeAll(async () => {
  svc = await startTestService();
  client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
});
afterAll(() => svc.close());

async function rendered(scheduling: Record<string, unknown>): Promise<string> {
  const job = await createJob(api(svc.baseUrl, svc.apiKey));
  await client.validateJob(job.id, {});
  await moveJob(svc, job.id, ['validating', 'validated']);
  await client.renderJob(job.id, { requestedRenderConfig: { colorManagementPreset: 'default' }, scheduling });
  return job.id;
}

describe('SchedulingCalls', () => {
  it('is offered, and changes priority, pauses, resumes and approves', async () => {
    expect(await client.hasExtension('scheduling')).toBe(true);
    const id = await rendered({ priority: 10, approvePreviews: true });
    expect((await client.getJob(id)).scheduling?.priority).toBe(10);
    expect((await client.setJobPriority(id, 80)).scheduling?.priority).toBe(80);
    expect((await client.pauseJob(id)).scheduling?.paused).toBe(true);
    expect((await client.resumeJob(id)).scheduling?.paused).toBe(false);
    expect((await client.approvePreviews(id)).scheduling?.previews?.gate).toBe('approved');
  });

  it('throws the typed errors: a cycle, a job without a gate', async () => {
    const id = await rendered({});
    await expect(client.approvePreviews(id)).rejects.toMatchObject({ body: { name: 'PREVIEW_APPROVAL_NOT_PENDING' } });
    const job = await createJob(api(svc.baseUrl, svc.apiKey));
    await client.validateJob(job.id, {});
    await moveJob(svc, job.id, ['validating', 'validated']);
    const err = await client
      .renderJob(job.id, {
        requestedRenderConfig: { colorManagementPreset: 'default' },
        scheduling: { dependsOn: [job.id] },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).body.name).toBe('DEPENDENCY_CYCLE');
    expect((err as ApiError).status).toBe(409);
  });
});
