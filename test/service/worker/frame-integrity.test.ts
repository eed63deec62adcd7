// What a machine crash can leave of rendered files, on real files from ffmpeg's image encoders:
// a file that exists but is empty, cut short or zeros is damaged; a whole one in any frame format
// is not; and only files older than the worker are read at all.
import { mkdtemp, open, readFile, rm, stat, truncate, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { damagedFiles, looksWhole } from '../../../service/worker/outputs/frame-integrity.js';
import { writeTestFrames } from '../../helpers/test-frames.js';

let dir: string;
const FORMATS = ['png', 'jpg', 'exr', 'tif'] as const;
const whole = (ext: string) => path.join(dir, `whole.${ext}`);

/** A copy of a whole file, damaged as a power loss leaves it, dated an hour back. */
async function damaged(ext: string, how: 'empty' | 'zeros' | 'cut'): Promise<string> {
  const file = path.join(dir, `${how}-${Math.random().toString(36).slice(2)}.${ext}`);
  const bytes = await readFile(whole(ext));
  if (how === 'empty') await writeFile(file, '');
  else if (how === 'zeros') await writeFile(file, Buffer.alloc(bytes.length));
  else {
    await writeFile(file, bytes);
    await truncate(file, bytes.length - 100);
  }
  const past = new Date(Date.now() - 3600_000);
  await utimes(file, past, past);
  return file;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rb-integrity-'));
  for (const ext of FORMATS) {
    await writeTestFrames(whole(ext), 'testsrc=size=64x48:rate=1', {
      args: ext === 'exr' ? ['-pix_fmt', 'gbrpf32le'] : [],
    });
  }
  const past = new Date(Date.now() - 3600_000);
  for (const ext of FORMATS) await utimes(whole(ext), past, past);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('looksWhole', () => {
  it.each(FORMATS)('a whole %s frame is whole', async (ext) => {
    expect((await stat(whole(ext))).size).toBeGreaterThan(100);
    expect(await looksWhole(whole(ext))).toBe(true);
  });

  it.each(FORMATS)('an empty or zeroed %s file is damaged', async (ext) => {
    expect(await looksWhole(await damaged(ext, 'empty'))).toBe(false);
    expect(await looksWhole(await damaged(ext, 'zeros'))).toBe(false);
  });

  it.each(['png', 'jpg'])('a %s cut short is damaged (its format has an end marker)', async (ext) => {
    expect(await looksWhole(await damaged(ext, 'cut'))).toBe(false);
  });
});

describe('damagedFiles', () => {
  it('lists the damaged files older than the worker, in any order, and skips files that are gone', async () => {
    const bad = [await damaged('png', 'empty'), await damaged('exr', 'zeros'), await damaged('jpg', 'cut')];
    const files = [whole('png'), bad[0]!, whole('exr'), bad[1]!, path.join(dir, 'gone.png'), bad[2]!, whole('tif')];
    expect((await damagedFiles(files, Date.now())).sort()).toEqual([...bad].sort());
  });

  it('reads nothing of files written since the worker started: what it wrote itself is sound', async () => {
    const fresh = path.join(dir, 'fresh.png');
    await writeFile(fresh, ''); // empty, but written after the worker started
    const old = await damaged('png', 'zeros');
    const probe = await open(old, 'r');
    const read = vi.spyOn(Object.getPrototypeOf(probe) as { read: () => unknown }, 'read');
    await probe.close();
    try {
      const since = Date.now() - 60_000;
      expect(await damagedFiles([old], since)).toEqual([old]);
      const readsOfOld = read.mock.calls.length;
      expect(readsOfOld).toBeGreaterThan(0);
      expect(await damagedFiles([fresh, old], since)).toEqual([old]);
      expect(read.mock.calls.length).toBe(2 * readsOfOld);
    } finally {
      read.mockRestore();
    }
  });
});
