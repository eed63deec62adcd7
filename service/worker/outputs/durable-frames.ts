// A chunk's frames reach the disk before the queue hears that the chunk is done. The queue's "done"
// is a durable commit, while the files moved into out/ sit in the page cache until the kernel writes
// them back (up to 30 s on Linux's defaults). A power loss in between left a completed task whose
// frames came back empty or zeroed: nothing rendered them again, and finalize failed the job with
// FRAMES_MISSING. So the files of the chunk's frames, and the folders that name them (a rename or a
// new folder is durable only once its folder is synced), are fsync'd first, chunked and warm mode
// alike. One batch per task rather than one sync per frame as Blender saves it: the frame's
// bookkeeping never waits on the disk, and a warm task's few frames share their folder's sync.
import { open } from 'node:fs/promises';
import path from 'node:path';
import { frameOfFile, listFiles, type OutputLayout } from './chunk-files.js';

/** Files synced at once: enough to keep a disk's queue busy, few enough to leave descriptors free. */
const CONCURRENCY = 8;

/** fsync of a file or folder; one gone meanwhile (a cancel removed the job's files) is nothing to sync. */
async function syncPath(p: string): Promise<void> {
  let fh;
  try {
    fh = await open(p, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Syncs every file of `frames` in `out/` (camera and compositor files alike, found by the frame
 * number in their names), then their folders up to the job's folder. Returns the files synced.
 */
export async function syncFrames(out: OutputLayout, frames: readonly number[]): Promise<string[]> {
  const wanted = new Set(frames);
  const files: string[] = [];
  for (const area of [out.frames, out.composite]) {
    for (const rel of await listFiles(area)) {
      const frame = frameOfFile(rel);
      if (frame !== undefined && wanted.has(frame)) files.push(path.join(area, ...rel.split('/')));
    }
  }
  let next = 0;
  const worker = async () => {
    while (next < files.length) await syncPath(files[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, files.length) }, worker));
  // Deepest first, so that a folder is synced after the entries made in it.
  const folders = new Set<string>([out.frames, out.composite, out.outDir, path.dirname(out.outDir)]);
  for (const f of files) for (let d = path.dirname(f); d.startsWith(out.outDir); d = path.dirname(d)) folders.add(d);
  for (const d of [...folders].sort((a, b) => b.length - a.length)) await syncPath(d);
  return files;
}
