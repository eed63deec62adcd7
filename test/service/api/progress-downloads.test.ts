import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Downloads } from '../../../shared/api/downloads.js';
import { Job, JobEnvelope, JobList } from '../../../shared/api/job.js';
import { JobProgressEnvelope, ProgressList } from '../../../shared/api/progress.js';
import { createJob } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { filesOnly, moveJob, objectUrlPrefix, useTestService } from '../../helpers/service.js';

const used = useTestService();
const { call } = used;

const FRAME = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));

/** Publishes outputs as the worker's finalize step does, then completes the job. */
async function completedJob(): Promise<Job> {
  const job = await createJob(call);
  await call('POST', `/jobs/${job.id}/validate`, {});
  await moveJob(used.svc, job.id, ['validating', 'validated']);
  await call('POST', `/jobs/${job.id}/render`, {
    requestedRenderConfig: { colorManagementPreset: 'default', videoOutput: true },
  });
  await moveJob(used.svc, job.id, ['booting', 'rendering', 'finalizing']);
  const { storage, jobs } = used.svc.service.ports;
  const base = `outputs/${job.workspaceId}/${job.id}`;
  await storage.put(`${base}/frames/f_0001.png`, Readable.from([FRAME]));
  await storage.put(`${base}/composite/masks/mask0001.png`, Readable.from([Buffer.from('mask')]));
  await jobs.update(
    job.id,
    {},
    {
      previewKey: `${base}/frames/f_0001.png`,
      outputs: {
        frames: [
          {
            key: `${base}/frames/f_0001.png`,
            fileName: 'f_0001.png',
            view: null,
            outputType: 'frame',
            size: FRAME.length,
          },
        ],
        composites: [
          {
            key: `${base}/composite/masks/mask0001.png`,
            fileName: 'mask0001.png',
            relativePath: 'masks/mask0001.png',
            view: null,
            outputType: 'composite',
            compositeNodeName: 'File Output',
            size: 4,
          },
        ],
        framesZipKey: null,
        compositesZipKey: null,
        videos: [{ format: 'mp4', label: null, key: null, fps: 24, segment: { start: 1, end: 1 } }],
      },
    },
  );
  await moveJob(used.svc, job.id, ['finalizing', 'completed']);
  return job;
}

describe('progress', () => {
  it('gives null counters before a render produces them, then the stored counters', async () => {
    const job = await createJob(call);
    const before = JobProgressEnvelope.parse((await call('GET', `/jobs/${job.id}/progress`)).body).data;
    expect(before).toMatchObject({
      jobId: job.id,
      status: 'created',
      framesTotal: null,
      framesDone: null,
      percent: null,
    });
    await call('POST', `/jobs/${job.id}/validate`, {});
    await moveJob(used.svc, job.id, ['validating', 'validated']);
    await call('POST', `/jobs/${job.id}/render`, { requestedRenderConfig: { colorManagementPreset: 'default' } });
    await moveJob(used.svc, job.id, ['booting', 'rendering']);
    await used.svc.service.ports.jobs.setProgress({
      ...before,
      status: 'rendering',
      framesTotal: 10,
      framesDone: 4,
      framesRendering: 1,
      framesFailed: 0,
      currentFrame: 5,
      currentSample: 2,
      samplesTotal: 4,
      percent: 45,
      etaSeconds: 12,
      updatedAt: new Date().toISOString(),
    });
    const during = JobProgressEnvelope.parse((await call('GET', `/jobs/${job.id}/progress`)).body).data;
    expect(during).toMatchObject({ status: 'rendering', framesTotal: 10, framesDone: 4, percent: 45 });
    const list = ProgressList.parse((await call('GET', '/jobs/progress')).body).data;
    expect(list.find((p) => p.jobId === job.id)?.framesDone).toBe(4);
  });

  it('returns an empty array when nothing runs in the workspace', async () => {
    const quiet = api(used.svc.baseUrl, await used.svc.createApiKey('quiet'));
    expect((await quiet('GET', '/jobs/progress')).body).toEqual({ data: [] });
  });
});

describe('downloads', () => {
  it('has empty lists and null zips before a render, and [] (expected, not ready) during one', async () => {
    const job = await createJob(call);
    const before = Downloads.parse((await call('GET', `/jobs/${job.id}/downloads`)).body);
    expect(before).toMatchObject({
      frames: [],
      compositeNodes: [],
      transforms: { framesZip: null, compositeNodesZip: null, video: {} },
    });
    await call('POST', `/jobs/${job.id}/validate`, {});
    await moveJob(used.svc, job.id, ['validating', 'validated']);
    await call('POST', `/jobs/${job.id}/render`, {
      requestedRenderConfig: { colorManagementPreset: 'default', videoOutput: true },
    });
    const during = Downloads.parse((await call('GET', `/jobs/${job.id}/downloads`)).body);
    expect(during.transforms.framesZip).toEqual([]);
    expect(during.transforms.video.mp4?.[0]).toMatchObject({ expected: true, available: false, url: null });
  });

  it("lists a completed job's outputs with signed URLs that serve the bytes, with Range", async () => {
    const job = await completedJob();
    const d = Downloads.parse((await call('GET', `/jobs/${job.id}/downloads`)).body);
    expect(d.frames).toHaveLength(1);
    expect(d.frameOutputs?.[0]).toMatchObject({
      fileName: 'f_0001.png',
      outputType: 'frame',
      view: null,
      legacy: false,
    });
    expect(d.compositeNodeOutputs?.[0]).toMatchObject({
      relativePath: 'masks/mask0001.png',
      compositeNodeName: 'File Output',
    });
    expect(d.transforms.video.mp4?.[0]).toMatchObject({
      expected: true,
      available: false,
      fps: 24,
      segment: { start: 1, end: 1 },
    });

    const full = await fetch(d.frames[0]!);
    expect(full.status).toBe(200);
    expect(full.headers.get('accept-ranges')).toBe('bytes');
    expect(full.headers.get('content-disposition')).toContain('f_0001.png');
    expect(Buffer.from(await full.arrayBuffer()).equals(FRAME)).toBe(true);

    const part = await fetch(d.frames[0]!, { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${FRAME.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(FRAME.subarray(100, 200))).toBe(true);

    const bad = await fetch(d.frames[0]!, { headers: { range: 'bytes=999999-' } });
    expect(bad.status).toBe(416);

    const got = JobEnvelope.parse((await call('GET', `/jobs/${job.id}`)).body).data;
    expect(got.previewUrl?.startsWith(objectUrlPrefix(used.svc))).toBe(true);
    expect((await fetch(got.previewUrl!)).status).toBe(200);
    const listed = JobList.parse((await call('GET', '/jobs?pageSize=100')).body).jobs.find((j) => j.id === job.id);
    expect(listed?.previewUrl?.startsWith(objectUrlPrefix(used.svc))).toBe(true);
    expect((await fetch(listed!.previewUrl!)).status).toBe(200);

    // Once outputs are deleted for the client, no preview URL is handed out any more.
    await used.svc.service.ports.jobs.update(job.id, {
      output: { isDeletedForClient: true, scheduledForDeletionAt: null },
    });
    expect(JobEnvelope.parse((await call('GET', `/jobs/${job.id}`)).body).data.previewUrl).toBeNull();
    const after = JobList.parse((await call('GET', '/jobs?pageSize=100')).body).jobs.find((j) => j.id === job.id);
    expect(after?.previewUrl).toBeNull();
    expect(after?.output?.isDeletedForClient).toBe(true);
  });

  it.skipIf(filesOnly('checking download URL signatures'))(
    'refuses tampered and expired download URLs with 403',
    async () => {
      const job = await completedJob();
      const askedAt = Date.now();
      const d = Downloads.parse((await call('GET', `/jobs/${job.id}/downloads`)).body);
      const answeredAt = Date.now();
      const url = new URL(d.frames[0]!);
      const renamed = new URL(url);
      renamed.searchParams.set('fn', 'evil.exe');
      const other = new URL(url);
      other.pathname = other.pathname.replace('f_0001.png', 'f_0002.png');
      for (const u of [renamed, other]) {
        const r = await fetch(u);
        expect(r.status).toBe(403);
        expect(errorBody({ status: 403, headers: r.headers, body: await r.json() }).name).toBe('SIGNATURE_INVALID');
      }
      // The URL lasts downloadUrlTtlSeconds from when it was handed out...
      const ttl = used.svc.config.downloadUrlTtlSeconds;
      const exp = Number(url.searchParams.get('exp'));
      expect(exp).toBeGreaterThanOrEqual(Math.floor(askedAt / 1000) + ttl);
      expect(exp).toBeLessThanOrEqual(Math.floor(answeredAt / 1000) + ttl);
      // ...and once that time has passed it is refused: the same URL signed with an expiry a second
      // ago (the service's own key), instead of waiting out the lifetime on the real clock.
      const signer = used.svc.service.ports.fsStorage!.signer;
      const key = decodeURIComponent(url.pathname.slice('/storage/'.length));
      const signed = (expiresAt: number) => {
        const u = new URL(url);
        u.search = signer.sign({ method: 'GET', key, expiresAt, params: { fn: url.searchParams.get('fn')! } });
        return u;
      };
      expect((await fetch(signed(Math.floor(Date.now() / 1000) + 60))).status).toBe(200);
      const late = await fetch(signed(Math.floor(Date.now() / 1000) - 1));
      expect(late.status).toBe(403);
      expect(errorBody({ status: 403, headers: late.headers, body: await late.json() }).name).toBe('URL_EXPIRED');
    },
  );
});
