// The job's project folder, filled the same safe way whatever the project came as (a zip, a
// bare .blend, or the worker's blob project): everything goes to a temporary folder inside the
// job folder, renamed into place only when the whole project passed (on any failure it is
// removed); every folder written in is checked to be inside it; the disk keeps the space the
// render needs; the packer's manifest is read from the result.
import { mkdir, mkdtemp, realpath, rename, rm, statfs } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { PACK_MANIFEST_NAME, type PackManifest } from '../shared/pack/manifest.js';
import { DiskSpaceError, UnpackError } from './errors.js';
import { readManifest } from './manifest.js';
import { printable, type UnpackLimits } from './rules.js';

export interface UnpackResult {
  /** Real absolute path of the project folder (inside the job folder). */
  root: string;
  /** Files written, `/`-separated relative to `root`, sorted (folders not listed). */
  files: string[];
  /** Bytes written. */
  bytes: number;
  /** The packer's manifest when the project has one at its root, else null. */
  manifest: PackManifest | null;
}

/**
 * Makes `jobDir/destName` from what `fill` writes into the temporary folder it is given, and
 * returns it with the manifest. `destName` is replaced when it exists (a retried task).
 */
export async function intoProjectFolder(
  opts: { jobDir: string; destName?: string | undefined },
  fill: (tmp: string) => Promise<{ files: string[]; bytes: number }>,
): Promise<UnpackResult> {
  await mkdir(opts.jobDir, { recursive: true });
  const jobDir = await realpath(opts.jobDir);
  const destName = opts.destName ?? 'project';
  if (!/^[\w.-]+$/.test(destName) || destName === '.' || destName === '..')
    throw new Error(`bad destName "${destName}"`);
  const tmp = await mkdtemp(join(jobDir, '.unpack-'));
  try {
    const result = await fill(tmp);
    const manifest = result.files.includes(PACK_MANIFEST_NAME)
      ? await readManifest(join(tmp, PACK_MANIFEST_NAME))
      : null;
    const dest = join(jobDir, destName);
    await rm(dest, { recursive: true, force: true });
    await rename(tmp, dest);
    return { root: dest, files: result.files, bytes: result.bytes, manifest };
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Creates the folder a file at `segments` (or the folder itself, `isDir`) goes in, below `tmp`,
 * and checks that it really is inside `tmp`. Returns the file's path.
 */
export async function prepareEntryPath(
  tmp: string,
  segments: readonly string[],
  isDir: boolean,
  raw: string,
): Promise<string> {
  const parent = join(tmp, ...(isDir ? segments : segments.slice(0, -1)));
  await mkdir(parent, { recursive: true, mode: 0o755 });
  await assertInside(tmp, parent, raw);
  return join(tmp, ...segments);
}

/** Defence in depth: the folder we are about to write in really is inside the temporary folder. */
async function assertInside(root: string, dir: string, raw: string): Promise<void> {
  const real = await realpath(dir);
  const rel = relative(root, real);
  if (rel === '..' || rel.startsWith(`..${sep}`) || rel.startsWith(sep)) {
    throw new UnpackError(
      'ZIP_PATH_TRAVERSAL',
      `The archive entry "${printable(raw)}" would be written outside the job folder.`,
      { entry: printable(raw) },
    );
  }
}

/**
 * Writing `neededBytes` in `dir` must leave `limits.minFreeBytes` free. Too little room is the
 * worker's problem, not the upload's: DiskSpaceError, which the worker retries (maybe on another
 * machine, or after old jobs were cleaned up).
 */
export async function ensureFreeSpace(
  dir: string,
  neededBytes: number,
  limits: Pick<UnpackLimits, 'minFreeBytes'>,
): Promise<void> {
  const fs = await statfs(dir);
  const free = fs.bavail * fs.bsize;
  if (free - limits.minFreeBytes < neededBytes) throw new DiskSpaceError(free, neededBytes, limits.minFreeBytes);
}
