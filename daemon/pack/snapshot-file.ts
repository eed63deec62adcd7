// One planned file of a pack taken into the pack's folder (snapshot.ts says why each way): a .blend
// copied (a reflink where the filesystem clones) or linked to an earlier pack's untouched copy, any
// other file hard-linked, or read in place where no link can be made. Each checks that the file is
// still the one that was planned; one that changed or vanished meanwhile fails the pack.
import { constants } from 'node:fs';
import { copyFile, link, realpath, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DaemonError } from '../errors.js';
import { packFailed } from './layout.js';
import type { PlannedFile } from './pack-project.js';

/** How a file of the pack is held. */
export type SnapshotHow = 'copy' | 'reflink' | 'link' | 'in-place';

/** Where the upload reads one planned file, and what that file looked like when it was taken. */
export interface SnapshotFile {
  /** The artist's file. */
  source: string;
  /** The file the hash and the upload read: in the pack's folder, or `source` for `in-place`. */
  path: string;
  how: SnapshotHow;
  size: number;
  mtimeNs: bigint;
  /** `dev:ino` of `path`; undefined where the filesystem has no inode numbers. */
  identity: string | undefined;
  /** The artist's file as it was when taken (its planned stat): what a later pack must match to reuse `path`. */
  taken: { size: number; mtimeNs: bigint; identity: string | undefined };
}

/** Codes of link(2) meaning "no link here", not "something is wrong": the file is read in place. */
const NO_LINK = new Set(['EXDEV', 'EPERM', 'EACCES', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EINVAL']);

export async function copyBlend(
  f: PlannedFile,
  dest: string,
  reserve: (f: PlannedFile) => void,
): Promise<SnapshotFile> {
  let how: SnapshotHow = 'reflink';
  try {
    await copyFile(f.source, dest, constants.COPYFILE_FICLONE_FORCE);
  } catch {
    // No clone on this filesystem (ext4, NTFS, across filesystems): a real copy, within the bound.
    how = 'copy';
    reserve(f);
    try {
      await copyFile(f.source, dest);
    } catch (err) {
      if (!(await stat(f.source).catch(() => null))) throw vanished(f);
      throw packFailed(
        `Copying "${f.source}" into the daemon's pack folder failed (${(err as Error).message}); check the ` +
          `free space of "${path.dirname(dest)}", then retry.`,
        { file: f.source },
      );
    }
  }
  // The copy holds the planned scene only if the file stayed the same through it; a save that
  // landed meanwhile may have been copied half old, half new.
  const after = await stat(f.source, { bigint: true }).catch(() => null);
  if (!after) throw vanished(f);
  if (Number(after.size) !== f.size || after.mtimeNs !== f.mtimeNs || identityOf(after) !== f.identity)
    throw savedWhilePacking(f);
  const taken = await stat(dest, { bigint: true });
  return {
    source: f.source,
    path: dest,
    how,
    size: Number(taken.size),
    mtimeNs: taken.mtimeNs,
    identity: identityOf(taken),
    taken: plannedStat(f),
  };
}

/** A file modified this close to its copy may have changed again without its mtime moving (as hash-files.ts). */
const RACY_NS = 2_000_000_000n;

/**
 * Links the copy an earlier pack holds of `f` when `f` still has the stat it had when that copy
 * was taken and the copy itself is untouched; undefined (copy it) otherwise. The link counts
 * against the budget as a copy: its bytes stay on disk as long as either pack holds them.
 */
export async function reuseCopy(
  f: PlannedFile,
  dest: string,
  kept: SnapshotFile | undefined,
  reserve: (f: PlannedFile) => void,
): Promise<SnapshotFile | undefined> {
  if (!kept || f.identity === undefined || kept.identity === undefined) return undefined;
  if (kept.taken.size !== f.size || kept.taken.mtimeNs !== f.mtimeNs || kept.taken.identity !== f.identity)
    return undefined;
  // A copy taken within the filesystem's timestamp resolution of a save may hold either version.
  if (kept.mtimeNs - f.mtimeNs < RACY_NS) return undefined;
  try {
    await link(kept.path, dest);
  } catch {
    // The earlier pack was discarded meanwhile, or no link here: copy it.
    return undefined;
  }
  const now = await stat(dest, { bigint: true }).catch(() => null);
  if (!now || Number(now.size) !== kept.size || now.mtimeNs !== kept.mtimeNs || identityOf(now) !== kept.identity) {
    await rm(dest, { force: true });
    return undefined;
  }
  // A reflink shares the artist's blocks; a plain copy's bytes are on disk once for both packs,
  // but counted for each: the bound holds whichever pack goes first.
  if (kept.how === 'copy') reserve(f);
  return { ...kept, path: dest, taken: plannedStat(f) };
}

export async function linkFile(f: PlannedFile, dest: string): Promise<SnapshotFile> {
  // link(2) does not follow a symbolic link: link the file it points to.
  const real = await realpath(f.source).catch(() => null);
  if (!real) throw vanished(f);
  try {
    await link(real, dest);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code === 'ENOENT') throw vanished(f);
    if (!NO_LINK.has(code))
      throw packFailed(
        `Linking "${f.source}" into the daemon's pack folder failed (${(err as Error).message}); check its ` +
          `free space and permissions, then retry.`,
        { file: f.source },
      );
    return {
      source: f.source,
      path: f.source,
      how: 'in-place',
      size: f.size,
      mtimeNs: f.mtimeNs,
      identity: f.identity,
      taken: plannedStat(f),
    };
  }
  const taken = await stat(dest, { bigint: true });
  // The link must be the very file that was planned: one replaced meanwhile was being saved.
  if (Number(taken.size) !== f.size || taken.mtimeNs !== f.mtimeNs || identityOf(taken) !== f.identity)
    throw savedWhilePacking(f);
  return {
    source: f.source,
    path: dest,
    how: 'link',
    size: f.size,
    mtimeNs: f.mtimeNs,
    identity: f.identity,
    taken: plannedStat(f),
  };
}

function plannedStat(f: PlannedFile): SnapshotFile['taken'] {
  return { size: f.size, mtimeNs: f.mtimeNs, identity: f.identity };
}

export function identityOf(s: { dev: bigint; ino: bigint }): string | undefined {
  return s.ino === 0n ? undefined : `${s.dev}:${s.ino}`;
}

function vanished(f: PlannedFile): DaemonError {
  return packFailed(
    `"${f.source}" vanished while the project was being packed (moved or deleted); restore it or relink it, ` +
      `then pack again.`,
    { file: f.source },
  );
}

function savedWhilePacking(f: PlannedFile): DaemonError {
  return packFailed(
    `"${f.source}" changed while the project was being packed (it was being saved?); wait for the save to ` +
      `finish, then pack again.`,
    { file: f.source },
  );
}
