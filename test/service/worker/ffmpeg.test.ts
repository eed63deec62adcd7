// Real ffmpeg/ffprobe on frames made by ffmpeg's test source.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FfmpegError, probe } from '../../../service/worker/outputs/ffmpeg.js';
import { makePreview, makeThumbnails } from '../../../service/worker/outputs/ffmpeg-images.js';
import { encodeMp4, frameRate } from '../../../service/worker/outputs/ffmpeg-video.js';
import { writeTestFrames } from '../../helpers/test-frames.js';

const run = promisify(execFile);
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rb-ffmpeg-'));
  // 65x49: both sides odd, which x264 refuses unless padded.
  await writeTestFrames(path.join(dir, 'f_%04d.png'), 'testsrc=size=65x49:rate=24', { frames: 5 });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('frameRate', () => {
  it('turns Blender fps and fps_base into exact rationals', () => {
    expect(frameRate(24)).toBe('24');
    expect(frameRate(24, 1.001)).toBe('24000/1001');
    expect(frameRate(30, 1.001)).toBe('30000/1001');
    expect(frameRate(25, 1)).toBe('25');
    expect(frameRate(50, 2)).toBe('25');
    expect(() => frameRate(0)).toThrow(RangeError);
  });
});

describe('encodeMp4', () => {
  it('encodes an odd-sized PNG sequence to H.264 yuv420p, padded to even, at the requested rate', async () => {
    const out = path.join(dir, 'pattern.mp4');
    await encodeMp4({ framePattern: path.join(dir, 'f_%04d.png'), fps: 24, out });
    const p = await probe(out, { countFrames: true });
    expect(p).toMatchObject({ codec: 'h264', pixFmt: 'yuv420p', width: 66, height: 50, frames: 5, fps: 24 });
    expect((await readdir(dir)).filter((f) => f.endsWith('.part'))).toEqual([]);
  });

  it('plays a frame list with gaps in order, at 24000/1001 for fps_base 1.001', async () => {
    const out = path.join(dir, 'list.mp4');
    const frames = [1, 2, 4, 5].map((n) => path.join(dir, `f_${String(n).padStart(4, '0')}.png`));
    await encodeMp4({ frames, fps: 24, fpsBase: 1.001, out, tmpDir: dir });
    const p = await probe(out, { countFrames: true });
    expect(p.frames).toBe(4);
    expect(p.frameRate).toBe('24000/1001');
    expect(p.fps).toBeCloseTo(23.976, 3);
    // The numbered links were removed.
    expect((await readdir(dir)).filter((f) => f.startsWith('rb-mp4-'))).toEqual([]);
  });

  it('fails with the tail of stderr and leaves no output', async () => {
    const out = path.join(dir, 'missing.mp4');
    const err = await encodeMp4({ framePattern: path.join(dir, 'nope_%04d.png'), fps: 24, out }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FfmpegError);
    expect((err as FfmpegError).stderrTail).toMatch(/nope_%04d\.png|No such file/);
    expect(existsSync(out)).toBe(false);
    expect(existsSync(`${out}.part`)).toBe(false);
  });

  it('is killed by the abort signal', async () => {
    const out = path.join(dir, 'aborted.mp4');
    const ac = new AbortController();
    // A long synthetic input, so the process is still running when the signal fires.
    const started = Date.now();
    const p = encodeMp4({
      framePattern: path.join(dir, 'f_%04d.png'),
      fps: 24,
      out,
      signal: ac.signal,
      ffmpegPath: 'ffmpeg',
    });
    setTimeout(() => ac.abort(new Error('canceled')), 5);
    await expect(p).rejects.toThrow('canceled');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(existsSync(out)).toBe(false);
  });

  it('reports a missing executable clearly', async () => {
    const err = await probe(path.join(dir, 'f_0001.png'), { ffprobePath: 'ffprobe-that-does-not-exist' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FfmpegError);
    expect((err as Error).message).toContain('not found');
  });
});

describe('makePreview', () => {
  it('makes a smaller JPEG keeping the aspect ratio, and never enlarges', async () => {
    const src = path.join(dir, 'f_0003.png');
    const out = path.join(dir, 'preview.jpg');
    await makePreview({ input: src, out, maxWidth: 32 });
    const p = await probe(out);
    expect(p.width).toBe(32);
    expect(p.height).toBe(24);

    // A render-sized frame: the default preview is 320 px wide and far smaller in bytes.
    const large = path.join(dir, 'large.png');
    await writeTestFrames(large, 'testsrc=size=1280x720');
    const small = path.join(dir, 'large-preview.jpg');
    await makePreview({ input: large, out: small });
    expect(await probe(small)).toMatchObject({ width: 320, height: 180 });
    expect((await stat(small)).size).toBeLessThan((await stat(large)).size / 2);

    const big = path.join(dir, 'preview.png');
    await makePreview({ input: src, out: big });
    expect(await probe(big)).toMatchObject({ codec: 'png', width: 65, height: 49 });
  });
});

describe('makeThumbnails', () => {
  /** The first byte of the thumbnail's gray image: its brightness, 0-255. */
  const gray = async (file: string) =>
    (
      await run(
        'ffmpeg',
        ['-hide_banner', '-loglevel', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'gray', '-'],
        { encoding: 'buffer' },
      )
    ).stdout[0]!;

  it('scales a run of frames to JPEGs of at most 256 px in one process, in order', async () => {
    const big = path.join(dir, 'big_%04d.png');
    await writeTestFrames(big, 'testsrc=size=320x240:rate=24', { frames: 2 });
    const out = await mkdtemp(path.join(dir, 'thumbs-'));
    const made = await makeThumbnails({
      inputs: [path.join(dir, 'big_0002.png'), path.join(dir, 'big_0001.png')],
      outDir: out,
      tmpDir: dir,
    });
    expect(made.map((f) => path.basename(f))).toEqual(['00000001.jpg', '00000002.jpg']);
    for (const f of made) expect(await probe(f)).toMatchObject({ codec: 'mjpeg', width: 256, height: 192 });
    // In the order given: the first thumbnail is frame 2's (testsrc's frames differ).
    const again = await makeThumbnails({
      inputs: [path.join(dir, 'big_0002.png')],
      outDir: await mkdtemp(path.join(dir, 'thumbs-')),
      tmpDir: dir,
    });
    expect((await readFile(made[0]!)).equals(await readFile(again[0]!))).toBe(true);
    // Never enlarged: a 65x49 frame keeps its size.
    const [small] = await makeThumbnails({
      inputs: [path.join(dir, 'f_0001.png')],
      outDir: await mkdtemp(path.join(dir, 'thumbs-')),
      tmpDir: dir,
    });
    expect(await probe(small!)).toMatchObject({ width: 65, height: 49 });
  });

  it('tone-maps scene-linear EXR: a 0.5 grey shows as the sRGB curve shows it, not as a dark 128', async () => {
    const exr = path.join(dir, 'grey.exr');
    await writeTestFrames(exr, 'color=c=0x808080:size=64x48', { args: ['-pix_fmt', 'gbrpf32le', '-c:v', 'exr'] });
    const out = await mkdtemp(path.join(dir, 'thumbs-'));
    const [thumb] = await makeThumbnails({ inputs: [exr], outDir: out, tmpDir: dir });
    expect(await probe(thumb!)).toMatchObject({ codec: 'mjpeg', width: 64, height: 48 });
    // sRGB(0.5) is 188; mobius keeps values within range close to it. Without a view transform: 128.
    expect(await gray(thumb!)).toBeGreaterThan(170);
  });
});
