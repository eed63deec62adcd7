// POST /jobs/{id}/render while a priority change or a pause lands between the route's read of the
// job and its write (the move to `booting`): the render writes only the scheduling fields its
// request sets, over the job as it is at the write, so the other change stays on the job, and the
// queue ends as the job says. The interleaving is forced, without sleeps: the store's transition is
// wrapped so that the render's move first runs the other request to its end.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Job, JobEnvelope } from '../../../shared/api/job.js';
import { createJob } from '../../helpers/flow.js';
import { moveJob, useTestService } from '../../helpers/service.js';

const used = useTestService();
const { call } = used;
afterEach(() => vi.restoreAllMocks());

const CONFIG = { colorManagementPreset: 'default' } as const;

async function validatedJob(): Promise<Job> {
  const job = await createJob(call);
  expect((await call('POST', `/jobs/${job.id}/validate`, {})).status).toBe(202);
  await moveJob(used.svc, job.id, ['validating', 'validated']);
  return job;
}

/** Runs `between` to its end when the render's move of job `id` is about to write, once. */
function beforeRenderWrite(id: string, between: () => Promise<unknown>): void {
  const jobs = used.svc.service.ports.jobs;
  const write = jobs.transition.bind(jobs);
  let ran = false;
  vi.spyOn(jobs, 'transition').mockImplementation(async (...args: Parameters<typeof jobs.transition>) => {
    if (args[0] === id && args[2] === 'booting' && !ran) {
      ran = true;
      await between();
    }
    return write(...args);
  });
}

/** The priority the queue was told last for each job (setJobPriority on the real queue). */
function toldPriorities(): Map<string, number> {
  const queue = used.svc.service.ports.queue;
  const tell = queue.setJobPriority.bind(queue);
  const told = new Map<string, number>();
  vi.spyOn(queue, 'setJobPriority').mockImplementation(async (jobId, priority) => {
    told.set(jobId, priority);
    return tell(jobId, priority);
  });
  return told;
}

async function scheduling(id: string) {
  return JobEnvelope.parse((await call('GET', `/jobs/${id}`)).body).data.scheduling;
}

describe('a render racing a scheduling change', () => {
  it("keeps a priority set between the render's read and its write", async () => {
    const job = await validatedJob();
    const told = toldPriorities();
    beforeRenderWrite(job.id, async () => {
      expect((await call('POST', `/jobs/${job.id}/priority`, { priority: 90 })).status).toBe(200);
    });
    const r = await call('POST', `/jobs/${job.id}/render`, { requestedRenderConfig: CONFIG });
    expect(r.status).toBe(202);
    expect(Job.parse(r.body).scheduling).toMatchObject({ priority: 90, paused: false, previewFrames: true });
    expect(await scheduling(job.id)).toMatchObject({ priority: 90, dependsOn: [], waitingFor: [] });
    expect(told.get(job.id)).toBe(90);
  });

  it('keeps a pause set between the read and the write, and the render task stays held', async () => {
    const job = await validatedJob();
    beforeRenderWrite(job.id, async () => {
      expect((await call('POST', `/jobs/${job.id}/pause`)).status).toBe(200);
    });
    expect((await call('POST', `/jobs/${job.id}/render`, { requestedRenderConfig: CONFIG })).status).toBe(202);
    expect(await scheduling(job.id)).toMatchObject({ paused: true, priority: 50 });
    const claimed: string[] = [];
    for (let t; (t = await used.svc.service.ports.queue.claim('test-worker', ['render'], 60_000));)
      claimed.push(t.jobId);
    expect(claimed).not.toContain(job.id);
  });

  it("writes the render's own priority over an earlier change, and the queue follows the job", async () => {
    const job = await validatedJob();
    const told = toldPriorities();
    beforeRenderWrite(job.id, async () => {
      expect((await call('POST', `/jobs/${job.id}/priority`, { priority: 90 })).status).toBe(200);
    });
    const r = await call('POST', `/jobs/${job.id}/render`, {
      requestedRenderConfig: CONFIG,
      scheduling: { priority: 20, previewFrames: false },
    });
    expect(r.status).toBe(202);
    const s = await scheduling(job.id);
    expect(s).toMatchObject({ priority: 20, previewFrames: false });
    expect(told.get(job.id)).toBe(s?.priority);
  });
});
