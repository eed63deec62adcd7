// A remote worker's writes of a job's scheduling (extension scheduling) through the internal worker
// API: the planner's `waitingFor` is written field by field (JobRecords.setSchedulingFields), so a
// priority or pause set through the public API meanwhile stays; the body is checked strictly.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createJob } from '../../helpers/flow.js';
import { errorBody } from '../../helpers/http.js';
import { workerApiHarness } from './worker-api-harness.js';

const h = workerApiHarness();

describe('RemoteWorkerJobs.setSchedulingFields', () => {
  it('writes only the fields it names: a priority and pause set through the public API stay', async () => {
    const { id } = await createJob(h.call);
    const dep = randomUUID();
    // A scheduling as a render that waits for `dep` has it, written whole as the render route does.
    await h.svc.service.ports.jobs.setSchedulingFields(id, { waitingFor: [dep] });
    expect((await h.call('POST', `/jobs/${id}/priority`, { priority: 85 })).status).toBe(200);
    expect((await h.call('POST', `/jobs/${id}/pause`)).status).toBe(200);

    const rec = await h.jobs.setSchedulingFields(id, { waitingFor: [] });
    expect(rec?.job.scheduling).toMatchObject({ priority: 85, paused: true, waitingFor: [] });
    expect((await h.publicJob(id)).scheduling).toMatchObject({ priority: 85, paused: true, waitingFor: [] });
    expect(await h.jobs.setSchedulingFields(randomUUID(), { waitingFor: [] })).toBeUndefined();
  });

  it('refuses a field it does not know, and a priority out of range, with 400', async () => {
    const { id } = await createJob(h.call);
    for (const body of [{ dependsOn: [] }, { priority: 101 }]) {
      const r = await h.internal('POST', `/jobs/${id}/scheduling`, body);
      expect(r.status).toBe(400);
      expect(errorBody(r).name).toBe('VALIDATION_ERROR');
    }
  });
});
