// A job sent to render with its previews held for approval, as a client sends it, for the tests of the
// scheduling controls (daemon routes, tray job window). The test plays the worker's validation: the job is
// moved to validated through the ports, with no Blender.
import { expect } from 'vitest';
import type { Job } from '../../shared/api/job.js';
import { createJob, type Call } from './flow.js';
import { moveJob, type TestService } from './service.js';

/** Creates a job, validates it and asks for its render with `approvePreviews`; the job as created. */
export async function renderingWithApproval(svc: TestService, call: Call): Promise<Job> {
  const job = await createJob(call);
  expect((await call('POST', `/jobs/${job.id}/validate`, {})).status).toBe(202);
  await moveJob(svc, job.id, ['validating', 'validated']);
  const r = await call('POST', `/jobs/${job.id}/render`, {
    requestedRenderConfig: { colorManagementPreset: 'default' },
    scheduling: { approvePreviews: true },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return job;
}
