// The daemon's scheduling routes (the service's extension scheduling, for the add-on and the tray)
// through DaemonClient against a real daemon and the real service: priority, pause, resume and
// approve-previews answer the service's job, and the service's refusals pass through unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonClient, DaemonClientError } from '../../shared/daemon/client.js';
import { createJob } from '../helpers/flow.js';
import { api } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startTestDaemon, type TestDaemon } from './harness.js';
import { renderingWithApproval } from '../helpers/gated-job.js';

let svc: TestService;
let td: TestDaemon;
let client: DaemonClient;

beforeAll(async () => {
  svc = await startTestService();
  td = await startTestDaemon({ serviceUrl: svc.baseUrl }, { apiKey: svc.apiKey });
  client = new DaemonClient({ origin: td.daemon.origin, token: td.daemon.token });
});
afterAll(async () => {
  await td?.close();
  await svc?.close();
});

describe('daemon scheduling routes', () => {
  it('change priority, pause, resume and approve a gated job, answering the service job', async () => {
    const call = api(svc.baseUrl, svc.apiKey);
    const job = await renderingWithApproval(svc, call);
    expect((await client.setJobPriority(job.id, 90)).scheduling?.priority).toBe(90);
    expect((await client.pauseJob(job.id)).scheduling?.paused).toBe(true);
    expect((await client.resumeJob(job.id)).scheduling?.paused).toBe(false);
    expect((await client.approvePreviews(job.id)).scheduling?.previews?.gate).toBe('approved');
  });

  it("passes the service's refusal through: a job with nothing to approve", async () => {
    const job = await createJob(api(svc.baseUrl, svc.apiKey));
    const err = await client.approvePreviews(job.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DaemonClientError);
    expect([(err as DaemonClientError).status, (err as DaemonClientError).code]).toEqual([
      409,
      'PREVIEW_APPROVAL_NOT_PENDING',
    ]);
  });
});
