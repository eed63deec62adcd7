// Frames staged in object storage by one machine are found by another (filesystem storage of a
// real service stands in for the shared S3 bucket; test/service/scale renders across processes).
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputLayout, type OutputLayout } from '../../../service/worker/outputs/chunk-files.js';
import { FrameStaging, stagingPrefix } from '../../../service/worker/outputs/frame-staging.js';
import { startTestService, type TestService } from '../../helpers/service.js';

let svc: TestService;
let dir: string;
beforeAll(async () => {
  svc = await startTestService();
  dir = await mkdtemp(path.join(tmpdir(), 'rb-staging-'));
});
afterAll(async () => {
  await svc.close();
  await rm(dir, { recursive: true, force: true });
});

async function machine(name: string): Promise<OutputLayout> {
  const out = outputLayout(path.join(dir, name));
  await mkdir(out.frames, { recursive: true });
  await mkdir(out.composite, { recursive: true });
  return out;
}

describe('frame staging', () => {
  it('hands finished files to another machine, only those of the frames asked for, once', async () => {
    const storage = svc.service.ports.storage;
    const a = await machine('a');
    await writeFile(path.join(a.frames, 'frame_0001.png'), 'one');
    await writeFile(path.join(a.frames, 'frame_0002.png'), 'two');
    await mkdir(path.join(a.composite, 'Depth Out', 'sub dir'), { recursive: true });
    await writeFile(path.join(a.composite, 'Depth Out', 'sub dir', 'depth_0002 ü.exr'), 'depth');
    const jobId = '6c3d1a52-8f0e-4b36-9d0b-2f8d9f3f0c11';
    const onA = new FrameStaging(storage, stagingPrefix(jobId));
    await onA.stageFrames(a, new Set([2]));
    await onA.stageFrames(a, undefined);
    await onA.addRun('chunk0-1-1', { seconds: 12.5, device: 'CUDA', gpus: 1 });
    await onA.addRun('chunk1-1-2', { seconds: 7.25, device: 'CPU' });

    const b = await machine('b');
    const onB = new FrameStaging(storage, stagingPrefix(jobId));
    expect(await onB.fetchMissing(b, new Set([2]))).toBe(2);
    expect(await readFile(path.join(b.frames, 'frame_0002.png'), 'utf8')).toBe('two');
    expect(await readFile(path.join(b.composite, 'Depth Out', 'sub dir', 'depth_0002 ü.exr'), 'utf8')).toBe('depth');
    await expect(readFile(path.join(b.frames, 'frame_0001.png'))).rejects.toThrow();
    // The rest on demand; files already here are not fetched again.
    expect(await onB.fetchMissing(b)).toBe(1);
    expect(await onB.fetchMissing(b)).toBe(0);
    // Each run keeps the device it really used (the second fell back to the CPU).
    expect(await onB.runs('CPU')).toEqual([
      { seconds: 12.5, device: 'CUDA', gpus: 1 },
      { seconds: 7.25, device: 'CPU', gpus: 0 },
    ]);

    await onB.remove();
    expect(await storage.list(stagingPrefix(jobId))).toEqual([]);
  });
});
