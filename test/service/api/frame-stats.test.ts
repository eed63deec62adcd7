// GET /jobs/{id}/frames and the progress's etaBand (extension frame-stats), on the service's own
// store: the test plays the worker (rows through the store port, as a worker beside the service
// writes them). What a client sees: pages in frame order, the summary, the ETA band while frames
// render and none after, 404 for another workspace's job, 400 for a bad page.
import { describe, expect, it } from 'vitest';
import { FrameStatsPage, JobProgressWithEtaEnvelope } from '../../../shared/api/frame-stats.js';
import { ExtensionList } from '../../../shared/extensions.js';
import { createJob } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { seedRenderingFrames } from '../../helpers/frame-seed.js';
import { moveJob, useTestService } from '../../helpers/service.js';

const used = useTestService();
const { call } = used;

/** A job rendering 10 frames, 4 of them done (2 s, 2 s, 3 s, 5 s) on two slots. */
async function renderingJob(): Promise<string> {
  const job = await createJob(call);
  await call('POST', `/jobs/${job.id}/validate`, {});
  await moveJob(used.svc, job.id, ['validating', 'validated']);
  await call('POST', `/jobs/${job.id}/render`, { requestedRenderConfig: { colorManagementPreset: 'default' } });
  await moveJob(used.svc, job.id, ['booting', 'rendering']);
  await seedRenderingFrames(used.svc, job.id);
  return job.id;
}

describe('frame statistics', () => {
  it('is listed by GET /extensions with its route', async () => {
    const list = ExtensionList.parse((await call('GET', '/extensions')).body).data.extensions;
    expect(list.find((e) => e.name === 'frame-stats')).toMatchObject({ version: 1, routes: ['listJobFrames'] });
  });

  it("pages a job's frames in frame order with the summary of all of them and the ETA band", async () => {
    const id = await renderingJob();
    const first = FrameStatsPage.parse((await call('GET', `/jobs/${id}/frames?pageSize=3`)).body);
    expect(first.pagination).toEqual({ page: 1, pageSize: 3, total: 4, totalPages: 2 });
    expect(first.data.frames.map((f) => [f.frame, f.renderSeconds, f.peakMemoryBytes, f.slot])).toEqual([
      [1, 2, 100_000_000, 'w/cpu-0'],
      [2, 2, 200_000_000, 'w/cpu-1'],
      [3, 3, 300_000_000, 'w/cpu-0'],
    ]);
    expect(first.data.summary).toMatchObject({ framesDone: 4, medianSeconds: 2.5, peakMemoryMaxBytes: 400_000_000 });
    // 6 frames left at 3 s on the 2 slots that finished frames lately: 9 s, inside its band.
    expect(first.data.eta).toMatchObject({ seconds: 9, samples: 4, slots: 2 });
    expect(first.data.eta!.lowSeconds).toBeLessThan(9);
    expect(first.data.eta!.highSeconds).toBeGreaterThan(9);
    const second = FrameStatsPage.parse((await call('GET', `/jobs/${id}/frames?page=2&pageSize=3`)).body);
    expect(second.data.frames.map((f) => f.frame)).toEqual([4]);
  });

  it("adds the band to the job's progress while it renders, and none once it ended", async () => {
    const id = await renderingJob();
    const during = JobProgressWithEtaEnvelope.parse((await call('GET', `/jobs/${id}/progress`)).body).data;
    expect(during).toMatchObject({ framesDone: 4, etaSeconds: 9, etaBand: { seconds: 9, samples: 4, slots: 2 } });
    // Frame 5 half rendered (percent 45): 5.5 frames left, 8.3 s.
    const progress = (await used.svc.service.ports.jobs.getProgress(id))!;
    await used.svc.service.ports.jobs.setProgress({ ...progress, percent: 45 });
    expect(
      JobProgressWithEtaEnvelope.parse((await call('GET', `/jobs/${id}/progress`)).body).data.etaBand,
    ).toMatchObject({ seconds: 8.3, slots: 2 });
    await moveJob(used.svc, id, ['rendering', 'finalizing', 'completed']);
    expect(JobProgressWithEtaEnvelope.parse((await call('GET', `/jobs/${id}/progress`)).body).data.etaBand).toBeNull();
  });

  it('serves a 100,000-frame job a page at a time, the summary still over every frame', async () => {
    const job = await createJob(call);
    const at = new Date().toISOString();
    for (let start = 1; start <= 100_000; start += 1000) {
      await used.svc.service.ports.frameStats!.recordFrames(
        Array.from({ length: 1000 }, (_, i) => ({
          jobId: job.id,
          frame: start + i,
          attempt: 1,
          renderSeconds: (start + i) % 7,
          peakMemoryBytes: start + i,
          device: 'CPU',
          slot: 'w/cpu-0',
          blenderVersion: null,
          finishedAt: at,
        })),
      );
    }
    const res = await call('GET', `/jobs/${job.id}/frames?page=200`);
    const page = FrameStatsPage.parse(res.body);
    expect(page.pagination).toEqual({ page: 200, pageSize: 500, total: 100_000, totalPages: 200 });
    expect(page.data.frames.map((f) => f.frame)).toEqual(Array.from({ length: 500 }, (_, i) => 99_501 + i));
    expect(page.data.summary).toMatchObject({ framesDone: 100_000, medianSeconds: 3, peakMemoryMaxBytes: 100_000 });
    // The biggest page is 1000 rows: a bounded answer whatever the job's length.
    expect(
      FrameStatsPage.parse((await call('GET', `/jobs/${job.id}/frames?pageSize=1000`)).body).data.frames,
    ).toHaveLength(1000);
    expect((await call('GET', `/jobs/${job.id}/frames?pageSize=1001`)).status).toBe(400);
  }, 120_000);

  it("answers another workspace's job as missing, and a bad page as a validation error", async () => {
    const id = await renderingJob();
    const other = api(used.svc.baseUrl, await used.svc.createApiKey('elsewhere'));
    const hidden = await other('GET', `/jobs/${id}/frames`);
    expect(hidden.status).toBe(404);
    expect(errorBody(hidden).name).toBe('JOB_NOT_FOUND');
    const bad = await call('GET', `/jobs/${id}/frames?pageSize=100000`);
    expect(bad.status).toBe(400);
    expect(errorBody(bad).details[0]?.path).toEqual(['querystring', 'pageSize']);
  });
});
