// finalizeOutputs against real filesystem storage, real ffmpeg and `unzip`: what a job publishes, and what
// a cancel or a bad path leaves (nothing). streamZip alone is tested in test/zip/stream-zip.test.ts.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FsObjectStorage } from '../../../service/adapters/fs-storage/fs-storage.js';
import { UrlSigner } from '../../../service/adapters/fs-storage/url-signer.js';
import type { ObjectStorage } from '../../../service/ports/storage.js';
import { probe } from '../../../service/worker/outputs/ffmpeg.js';
import { finalizeOutputs, type ProducedFile } from '../../../service/worker/outputs/finalize-outputs.js';
import { jobOutputPrefix } from '../../../service/domain/output-keys.js';
import { writeTestFrames } from '../../helpers/test-frames.js';
import { storedKeys } from '../../helpers/stored-keys.js';

const run = promisify(execFile);
let root: string;
let outputDir: string;
let storageRoot: string;
let storage: FsObjectStorage;
const ws = randomUUID();

async function zipEntries(key: string): Promise<string[]> {
  const { stdout } = await run('unzip', ['-Z1', storage.filePath(key)]);
  return stdout.trim().split('\n').sort();
}

const frame = (n: number, view: string | null): ProducedFile => ({
  path: `f_${String(n).padStart(4, '0')}${view ? `_${view}` : ''}.png`,
  outputType: 'frame',
  view,
});

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'rb-finalize-test-'));
  outputDir = path.join(root, 'out');
  await mkdir(path.join(outputDir, 'comp', 'beauty'), { recursive: true });
  const src = (size: string, pattern: string) =>
    writeTestFrames(path.join(outputDir, pattern), `testsrc=size=${size}:rate=24`, { frames: 5 });
  await src('65x49', 'f_%04d_L.png');
  await src('65x49', 'f_%04d_R.png');
  await src('64x48', 'comp/beauty/beauty_%04d.png');
  // A compositor output whose name needs mapping to a safe object key.
  await copyFile(path.join(outputDir, 'comp/beauty/beauty_0001.png'), path.join(outputDir, 'comp/mask #1 (ü).png'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

beforeEach(async () => {
  storageRoot = path.join(root, `objects-${randomUUID()}`);
  storage = new FsObjectStorage(storageRoot, new UrlSigner(randomBytes(32)), () => 'http://127.0.0.1:1');
  await storage.init();
});

const frames = [1, 2, 4, 5].flatMap((n) => [frame(n, 'L'), frame(n, 'R')]);
const composites: ProducedFile[] = [
  ...[1, 2, 3].map((n) => ({
    path: `comp/beauty/beauty_000${n}.png`,
    outputType: 'composite' as const,
    view: null,
    relativePath: `beauty/beauty_000${n}.png`,
    compositeNodeName: 'File Output',
  })),
  {
    path: 'comp/mask #1 (ü).png',
    outputType: 'composite',
    view: null,
    relativePath: 'mask #1 (ü).png',
    compositeNodeName: 'Mask',
  },
];

describe('finalizeOutputs', () => {
  it('stores every file, streams both ZIPs, encodes an MP4 per view and makes a preview', async () => {
    const jobId = randomUUID();
    const prefix = jobOutputPrefix(ws, jobId);
    const r = await finalizeOutputs({
      jobId,
      workspaceId: ws,
      outputDir,
      files: [...frames, ...composites],
      storage,
      videoOutput: true,
      fps: 24,
      fpsBase: 1,
    });
    expect(r.warnings).toEqual([]);

    const { outputs } = r;
    expect(outputs.frames.map((f) => [f.fileName, f.view])).toEqual(
      [1, 2, 4, 5].flatMap((n) => [
        [`f_000${n}_L.png`, 'L'],
        [`f_000${n}_R.png`, 'R'],
      ]),
    );
    expect(outputs.frames[0]).toMatchObject({ key: `${prefix}/frames/f_0001_L.png`, outputType: 'frame' });
    for (const f of [...outputs.frames, ...outputs.composites]) expect((await storage.stat(f.key))?.size).toBe(f.size);

    expect(outputs.composites.map((c) => [c.relativePath, c.compositeNodeName])).toEqual([
      ['beauty/beauty_0001.png', 'File Output'],
      ['beauty/beauty_0002.png', 'File Output'],
      ['beauty/beauty_0003.png', 'File Output'],
      ['mask #1 (ü).png', 'Mask'],
    ]);
    expect(outputs.composites[3]).toMatchObject({
      fileName: 'mask #1 (ü).png',
      key: `${prefix}/composites/mask _1 ___.png`,
      outputType: 'composite',
    });

    expect(outputs.framesZipKey).toBe(`${prefix}/archives/${jobId}-frames.zip`);
    expect(await zipEntries(outputs.framesZipKey!)).toEqual(outputs.frames.map((f) => f.fileName).sort());
    expect(await zipEntries(outputs.compositesZipKey!)).toEqual(composites.map((c) => c.relativePath!).sort());
    // Entries are stored, not deflated (`unzip -v` prints the method per entry).
    const { stdout: verbose } = await run('unzip', ['-v', storage.filePath(outputs.framesZipKey!)]);
    expect(verbose).toMatch(/Stored/);
    expect(verbose).not.toMatch(/Defl/);
    // Bytes inside equal the stored frame.
    const { stdout: inZip } = await run('unzip', ['-p', storage.filePath(outputs.framesZipKey!), 'f_0004_R.png'], {
      encoding: 'buffer',
    });
    expect(inZip.length).toBe(outputs.frames.find((f) => f.fileName === 'f_0004_R.png')!.size);

    expect(outputs.videos).toEqual([
      { format: 'mp4', label: 'L', key: `${prefix}/video/${jobId}-L.mp4`, fps: 24, segment: { start: 1, end: 5 } },
      { format: 'mp4', label: 'R', key: `${prefix}/video/${jobId}-R.mp4`, fps: 24, segment: { start: 1, end: 5 } },
    ]);
    const mp4 = await probe(storage.filePath(outputs.videos[0]!.key!), { countFrames: true });
    expect(mp4).toMatchObject({ codec: 'h264', pixFmt: 'yuv420p', width: 66, height: 50, frames: 4 });

    // The frames are narrower than a preview: the middle frame of the first view is the preview as is.
    expect(r.previewKey).toBe(`${prefix}/preview.png`);
    expect(
      (await readFile(storage.filePath(r.previewKey!))).equals(await readFile(path.join(outputDir, 'f_0002_L.png'))),
    ).toBe(true);
    expect((await storedKeys(storageRoot)).every((k) => k.startsWith(`${prefix}/`))).toBe(true);
    // Every frame got the thumbnail its slot would have made (of its first view): PNGs this small are their own.
    expect((await storedKeys(storageRoot)).filter((k) => k.includes('/thumbnails/'))).toEqual(
      [1, 2, 4, 5].map((n) => `${prefix}/thumbnails/f${n}.png`),
    );
    expect(
      (await readFile(storage.filePath(`${prefix}/thumbnails/f4.png`))).equals(
        await readFile(path.join(outputDir, 'f_0004_L.png')),
      ),
    ).toBe(true);
  });

  it('without video or composites: no MP4, null composite ZIP; a retry replaces what an earlier try left', async () => {
    const jobId = randomUUID();
    const opts = {
      jobId,
      workspaceId: ws,
      outputDir,
      files: [frame(1, null)].map((f) => ({ ...f, path: 'f_0001_L.png' })),
      storage,
    };
    await finalizeOutputs(opts);
    const r = await finalizeOutputs(opts);
    expect(r.outputs).toMatchObject({ compositesZipKey: null, videos: [], composites: [] });
    expect(r.outputs.frames).toHaveLength(1);
    expect(await zipEntries(r.outputs.framesZipKey!)).toEqual(['f_0001_L.png']);
  });

  it('an MP4 that cannot be made is listed as unavailable, with a warning, and the job still finalizes', async () => {
    const jobId = randomUUID();
    const r = await finalizeOutputs({
      jobId,
      workspaceId: ws,
      outputDir,
      files: [frame(1, 'L')],
      storage,
      videoOutput: true,
      fps: 24,
      ffmpeg: { ffmpegPath: path.join(root, 'no-ffmpeg') },
    });
    expect(r.outputs.videos).toEqual([
      { format: 'mp4', label: 'L', key: null, fps: 24, segment: { start: 1, end: 1 } },
    ]);
    // A small PNG frame needs no ffmpeg to be a preview.
    expect(r.previewKey).toMatch(/preview\.png$/);
    expect(r.warnings.join('\n')).toMatch(/MP4 of view L not made.*not found/);
    expect(r.outputs.frames).toHaveLength(1);
  });

  it('scales a large frame down to a JPEG preview at most 320 px wide', async () => {
    const big = path.join(outputDir, 'big');
    await mkdir(big, { recursive: true });
    await writeTestFrames(path.join(big, 'f_0001.png'), 'testsrc=size=640x360:rate=24');
    const r = await finalizeOutputs({
      jobId: randomUUID(),
      workspaceId: ws,
      outputDir,
      files: [{ path: 'big/f_0001.png', outputType: 'frame', view: null }],
      storage,
    });
    expect(r.previewKey).toMatch(/preview\.jpg$/);
    expect(await probe(storage.filePath(r.previewKey!))).toMatchObject({ width: 320, height: 180 });
  });

  it('a job canceled before finalizing publishes nothing', async () => {
    const ac = new AbortController();
    ac.abort(new Error('job canceled'));
    await expect(
      finalizeOutputs({
        jobId: randomUUID(),
        workspaceId: ws,
        outputDir,
        files: frames,
        storage,
        videoOutput: true,
        fps: 24,
        signal: ac.signal,
      }),
    ).rejects.toThrow('job canceled');
    expect(await storedKeys(storageRoot)).toEqual([]);
  });

  it('a cancel while packaging deletes what was already stored', async () => {
    const ac = new AbortController();
    let puts = 0;
    // Cancels right after the third object was stored, while frames are still being written.
    const stored = <T>(res: T) => {
      if (++puts === 3) ac.abort(new Error('job canceled'));
      return res;
    };
    const counting: ObjectStorage = Object.assign(Object.create(storage) as FsObjectStorage, {
      put: async (...args: Parameters<ObjectStorage['put']>) => stored(await storage.put(...args)),
      putFile: async (...args: Parameters<ObjectStorage['putFile']>) => stored(await storage.putFile(...args)),
    });
    await expect(
      finalizeOutputs({
        jobId: randomUUID(),
        workspaceId: ws,
        outputDir,
        files: [...frames, ...composites],
        storage: counting,
        videoOutput: true,
        fps: 24,
        signal: ac.signal,
      }),
    ).rejects.toThrow('job canceled');
    expect(puts).toBeGreaterThanOrEqual(3);
    expect(await storedKeys(storageRoot)).toEqual([]);
  });

  it('a cancel during the ZIP stream deletes everything too', async () => {
    const ac = new AbortController();
    let zipStarted = false;
    const zipping: ObjectStorage = Object.assign(Object.create(storage) as FsObjectStorage, {
      put: (key: string, body: Parameters<ObjectStorage['put']>[1]) => {
        if (key.endsWith('.zip')) {
          zipStarted = true;
          setImmediate(() => ac.abort(new Error('job canceled')));
        }
        return storage.put(key, body);
      },
    });
    await expect(
      finalizeOutputs({
        jobId: randomUUID(),
        workspaceId: ws,
        outputDir,
        files: frames,
        storage: zipping,
        signal: ac.signal,
      }),
    ).rejects.toThrow('job canceled');
    expect(zipStarted).toBe(true);
    // Only the frames' thumbnails stay: the job's page lists them whatever becomes of the job.
    expect((await storedKeys(storageRoot)).filter((k) => !k.includes('/thumbnails/'))).toEqual([]);
  });

  it('refuses files outside the output folder', async () => {
    await expect(
      finalizeOutputs({
        jobId: randomUUID(),
        workspaceId: ws,
        outputDir,
        files: [{ path: '../escape.png', outputType: 'frame', view: null }],
        storage,
      }),
    ).rejects.toThrow(/outside/);
  });
});
