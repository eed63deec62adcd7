// Rendered files a machine crash may have damaged. A file moves into `out/` only once Blender saved
// it, and frames are not synced one by one (a task syncs its frames once, before it is done:
// durable-frames.ts), so a crash of the worker process loses nothing: the page cache outlives it.
// A power loss is different: a frame of a task not done yet that was saved and moved may come back
// empty, or with zeros where the filesystem had not written its bytes yet (ext4's delayed
// allocation), and counting it as a finished frame would publish it.
// Only files older than the worker that finds them can be such leftovers (what it wrote since it
// started is sound), so only those are read, and only their first and last bytes.
import { open, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import { filesOfFrame, placeOf, type OutputLayout } from './chunk-files.js';

/** How each format a frame may have begins and ends; other formats only must not begin with zeros. */
const SIGNATURES: Record<string, { head: string; tail?: string }> = {
  '.png': { head: '89504e470d0a1a0a', tail: '0000000049454e44ae426082' },
  '.jpg': { head: 'ffd8ff', tail: 'ffd9' },
  '.jpeg': { head: 'ffd8ff', tail: 'ffd9' },
  '.exr': { head: '762f3101' },
};

/** Files read at once. */
const CONCURRENCY = 8;

/** Whether `file` looks whole: not empty, and starting (and ending) as its format does. */
export async function looksWhole(file: string): Promise<boolean> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    if (size === 0) return false;
    const sig = SIGNATURES[path.extname(file).toLowerCase()];
    const head = (await fh.read(Buffer.alloc(Math.min(8, size)), 0, Math.min(8, size), 0)).buffer;
    if (sig ? !head.toString('hex').startsWith(sig.head) : head.every((b) => b === 0)) return false;
    if (!sig?.tail) return true;
    const n = sig.tail.length / 2;
    if (size < n) return false;
    const tail = (await fh.read(Buffer.alloc(n), 0, n, size - n)).buffer;
    return tail.toString('hex') === sig.tail;
  } finally {
    await fh.close();
  }
}

/**
 * Of `files`, those last written before `since` (the worker's start, epoch ms) that do not look
 * whole (looksWhole). A file that is gone is not listed: the caller counts it as missing anyway.
 */
export async function damagedFiles(files: readonly string[], since: number): Promise<string[]> {
  const damaged: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++]!;
      try {
        const { mtimeMs } = await stat(file);
        if (mtimeMs < since && !(await looksWhole(file))) damaged.push(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, files.length) }, worker));
  return damaged;
}

/**
 * Frames of `done` (found finished in `out/`) whose files were left damaged by a machine crash
 * (damagedFiles) are not done: their files are deleted, so that they are rendered again.
 */
export async function dropDamagedFrames(
  final: FinalConfig,
  layout: OutputLayout,
  done: ReadonlySet<number>,
  since: number,
): Promise<{ done: Set<number>; removed: string[] }> {
  const fileFrame = new Map<string, number>();
  for (const frame of done) for (const f of filesOfFrame(final, frame)) fileFrame.set(placeOf(layout, f), frame);
  const removed = await damagedFiles([...fileFrame.keys()], since);
  await Promise.all(removed.map((f) => rm(f, { force: true })));
  const bad = new Set(removed.map((f) => fileFrame.get(f)));
  return { done: new Set([...done].filter((f) => !bad.has(f))), removed };
}
