// The typed client's frame statistics against the real reference service (extension frame-stats):
// `listJobFrames` pages a job's frames, parsed by the route's schema, and `getJobProgress` carries
// `etaBand` in its type. The test plays the worker (rows and progress through the service's ports).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EtaBand } from '../../../shared/api/frame-stats.js';
import { ApiError } from '../../../shared/client/errors.js';
import { RenderJobClient } from '../../../shared/client/client.js';
import { seedRenderingFrames } from '../../helpers/frame-seed.js';
import { moveJob, startTestService, type TestService } from '../../helpers/service.js';

let svc: TestService;
let client: RenderJobClient;
let dir: string;
let blendPath: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rb-client-frames-'));
  blendPath = join(dir, 'scene.blend');
  // A .blend header and filler: enough for upload and job creation, which do not parse it.
  await writeFile(blendPath, Buffer.concat([Buffer.from('BLENDER-v402'), randomBytes(4096)]));
  svc = await startTestService();
  client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey, baseDelayMs: 10, maxDelayMs: 1000 });
});

afterAll(async () => {
  await svc?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A job rendering 10 frames, frames 1-4 done on two slots, as the worker records them. */
async function renderingJob(): Promise<string> {
  const job = await client.createJob({ slug: (await client.uploadProject(blendPath)).slug });
  await client.validateJob(job.id);
  await moveJob(svc, job.id, ['validating', 'validated']);
  await client.renderJob(job.id, { requestedRenderConfig: { colorManagementPreset: 'default' } });
  await moveJob(svc, job.id, ['booting', 'rendering']);
  await seedRenderingFrames(svc, job.id);
  return job.id;
}

describe('client: frame statistics', () => {
  it('says the service offers frame-stats', async () => {
    expect(await client.hasExtension('frame-stats')).toBe(true);
  });

  it('listJobFrames pages the frames in frame order, with the summary of all and the ETA band', async () => {
    const id = await renderingJob();
    const first = await client.listJobFrames(id, { pageSize: 3 });
    expect(first.pagination).toEqual({ page: 1, pageSize: 3, total: 4, totalPages: 2 });
    expect(first.data.jobId).toBe(id);
    expect(
      first.data.frames.map((f) => [f.frame, f.renderSeconds, f.peakMemoryBytes, f.device, f.slot, f.blenderVersion]),
    ).toEqual([
      [1, 2, 100_000_000, 'CPU', 'w/cpu-0', '4.2.3'],
      [2, 2, 200_000_000, 'CPU', 'w/cpu-1', '4.2.3'],
      [3, 3, 300_000_000, 'CPU', 'w/cpu-0', '4.2.3'],
    ]);
    expect(first.data.summary).toMatchObject({ framesDone: 4, medianSeconds: 2.5, peakMemoryMaxBytes: 400_000_000 });
    expect(first.data.eta).toMatchObject({ seconds: 9, samples: 4, slots: 2 });
    const second = await client.listJobFrames(id, { page: 2, pageSize: 3 });
    expect(second.pagination).toMatchObject({ page: 2, total: 4 });
    expect(second.data.frames.map((f) => f.frame)).toEqual([4]);
    // The server's defaults: page 1 of up to 500.
    const all = await client.listJobFrames(id);
    expect(all.pagination).toEqual({ page: 1, pageSize: 500, total: 4, totalPages: 1 });
  });

  it("getJobProgress carries etaBand in its type, equal to the frames route's eta", async () => {
    const id = await renderingJob();
    const progress = await client.getJobProgress(id);
    // Typed: no cast needed to read the extension's field.
    const band: EtaBand | null | undefined = progress.etaBand;
    expect(band).toMatchObject({ seconds: 9, samples: 4, slots: 2 });
    expect(band!.lowSeconds).toBeLessThan(9);
    expect(band!.highSeconds).toBeGreaterThan(9);
    expect((await client.listJobFrames(id)).data.eta).toEqual(band);
    // Once the job ended, no band.
    await moveJob(svc, id, ['rendering', 'finalizing', 'completed']);
    expect((await client.getJobProgress(id)).etaBand ?? null).toBeNull();
  });

  it("answers a bad page size and another workspace's job with the service's errors", async () => {
    const id = await renderingJob();
    const bad = await client.listJobFrames(id, { pageSize: 5000 }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ApiError);
    expect((bad as ApiError).status).toBe(400);
    expect((bad as ApiError).body.name).toBe('VALIDATION_ERROR');
    const other = new RenderJobClient({
      baseUrl: svc.baseUrl,
      apiKey: await svc.createApiKey('elsewhere'),
      baseDelayMs: 10,
      maxDelayMs: 1000,
    });
    const missing = await other.listJobFrames(id).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect((missing as ApiError).status).toBe(404);
    expect((missing as ApiError).body.name).toBe('JOB_NOT_FOUND');
  });
});
