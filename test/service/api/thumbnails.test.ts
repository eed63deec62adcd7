// GET /jobs/{id}/thumbnails and GET /jobs/{id}/thumbnails/image (extension frame-thumbnails), on
// the service's own store (files, or S3 on the scale stack): the test plays the worker with its
// real thumbnail code and real ffmpeg (frames from ffmpeg's test source), then reads as a client
// does: frames in order with signed URLs whose bytes are the thumbnails (a large frame scaled to
// 256 px, a small PNG as it is), the latest frame, the image route, and 404 for another workspace.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ThumbnailList } from '../../../shared/api/thumbnails.js';
import { ExtensionList } from '../../../shared/extensions.js';
import { jobOutputPrefix } from '../../../service/domain/output-keys.js';
import { probe } from '../../../service/worker/outputs/ffmpeg.js';
import { storeThumbnails } from '../../../service/worker/outputs/thumbnails.js';
import { createJob } from '../../helpers/flow.js';
import { errorBody } from '../../helpers/http.js';
import { writeTestFrames } from '../../helpers/test-frames.js';
import { useTwoWorkspaces } from '../../helpers/two-workspaces.js';

let dir: string;

const ws = useTwoWorkspaces('rival studio');
const { call, other: rival } = ws;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rb-thumbs-api-'));
  for (const [name, size] of [
    ['big_0001.png', '320x240'],
    ['big_0002.png', '320x240'],
    ['small_0003.png', '64x48'],
  ]) {
    await writeTestFrames(path.join(dir, name!), `testsrc=size=${size}`);
  }
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A job of the test's workspace with thumbnails of frames 1-3 stored as a worker stores them. */
async function jobWithThumbnails(): Promise<string> {
  const job = await createJob(call);
  const stored = await storeThumbnails(
    { storage: ws.svc.service.ports.storage, prefix: jobOutputPrefix(job.workspaceId, job.id), workDir: dir },
    [
      { frame: 1, file: path.join(dir, 'big_0001.png') },
      { frame: 2, file: path.join(dir, 'big_0002.png') },
      { frame: 3, file: path.join(dir, 'small_0003.png') },
    ],
  );
  expect(stored).toBe(3);
  return job.id;
}

async function sizeOf(url: string, name: string): Promise<{ codec: string; width: number; height: number }> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const file = path.join(dir, name);
  await writeFile(file, Buffer.from(await res.arrayBuffer()));
  const p = await probe(file);
  return { codec: p.codec, width: p.width, height: p.height };
}

describe('frame thumbnails', () => {
  it('is listed by GET /extensions with its routes', async () => {
    const list = ExtensionList.parse((await call('GET', '/extensions')).body).data.extensions;
    expect(list.find((e) => e.name === 'frame-thumbnails')).toMatchObject({
      version: 1,
      routes: ['listJobThumbnails', 'getJobThumbnail'],
    });
  });

  it("lists a job's thumbnails in frame order with signed URLs of the scaled images", async () => {
    const id = await jobWithThumbnails();
    const list = ThumbnailList.parse((await call('GET', `/jobs/${id}/thumbnails`)).body);
    expect(list.data.thumbnails.map((t) => t.frame)).toEqual([1, 2, 3]);
    expect(list.pagination).toEqual({ page: 1, pageSize: 200, total: 3, totalPages: 1 });
    // Not planned: no frame rate yet. No statistics: the highest frame is the latest.
    expect(list.data.fps).toBeNull();
    expect(list.data.latest?.frame).toBe(3);
    // 320x240 through ffmpeg: a JPEG of 256 px on its long side; 64x48 is its own thumbnail.
    expect(await sizeOf(list.data.thumbnails[0]!.url, 'one.bin')).toEqual({ codec: 'mjpeg', width: 256, height: 192 });
    expect(await sizeOf(list.data.thumbnails[2]!.url, 'three.bin')).toEqual({ codec: 'png', width: 64, height: 48 });

    const page2 = ThumbnailList.parse((await call('GET', `/jobs/${id}/thumbnails?page=2&pageSize=2`)).body);
    expect(page2.data.thumbnails.map((t) => t.frame)).toEqual([3]);
    expect(page2.pagination).toMatchObject({ total: 3, totalPages: 2 });
    expect(errorBody(await call('GET', `/jobs/${id}/thumbnails?pageSize=5000`)).name).toBe('VALIDATION_ERROR');
  });

  it('names the frame that finished last by the frame statistics', async () => {
    const id = await jobWithThumbnails();
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    // Frame 2 finished after 3 and 1 (two slots).
    await ws.svc.service.ports.frameStats!.recordFrames(
      [1, 3, 2].map((frame, i) => ({
        jobId: id,
        frame,
        attempt: 1,
        renderSeconds: 1,
        peakMemoryBytes: null,
        device: 'CPU',
        slot: 'w/cpu-0',
        blenderVersion: null,
        finishedAt: at(i),
      })),
    );
    expect(ThumbnailList.parse((await call('GET', `/jobs/${id}/thumbnails`)).body).data.latest?.frame).toBe(2);
    const latest = await call('GET', `/jobs/${id}/thumbnails/image`);
    expect(latest.headers.get('x-thumbnail-frame')).toBe('2');
  });

  it("serves one thumbnail's image, the latest without a frame, and 404 for a frame without one", async () => {
    const id = await jobWithThumbnails();
    const res = await fetch(`${ws.svc.baseUrl}/jobs/${id}/thumbnails/image?frame=1`, {
      headers: { authorization: `Bearer ${ws.svc.apiKey}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(res.headers.get('x-thumbnail-frame')).toBe('1');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(0, 2).toString('hex')).toBe('ffd8');
    const latest = await fetch(`${ws.svc.baseUrl}/jobs/${id}/thumbnails/image`, {
      headers: { authorization: `Bearer ${ws.svc.apiKey}` },
    });
    expect([latest.status, latest.headers.get('content-type'), latest.headers.get('x-thumbnail-frame')]).toEqual([
      200,
      'image/png',
      '3',
    ]);
    expect(errorBody(await call('GET', `/jobs/${id}/thumbnails/image?frame=9`)).name).toBe('THUMBNAIL_NOT_FOUND');
    expect(errorBody(await call('GET', `/jobs/${id}/thumbnails/image?frame=x`)).name).toBe('VALIDATION_ERROR');
    // A job without thumbnails lists none and has no latest.
    const empty = await createJob(call);
    expect(ThumbnailList.parse((await call('GET', `/jobs/${empty.id}/thumbnails`)).body).data).toMatchObject({
      thumbnails: [],
      latest: null,
    });
    expect((await call('GET', `/jobs/${empty.id}/thumbnails/image`)).status).toBe(404);
  });

  it('answers another workspace 404 for the list and the image, as for a job that does not exist', async () => {
    const id = await jobWithThumbnails();
    for (const p of [
      `/jobs/${id}/thumbnails`,
      `/jobs/${id}/thumbnails/image`,
      `/jobs/${id}/thumbnails/image?frame=1`,
    ]) {
      const r = await rival('GET', p);
      expect(r.status, p).toBe(404);
      expect(errorBody(r).name, p).toBe('JOB_NOT_FOUND');
    }
  });
});
