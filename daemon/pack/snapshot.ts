// A pack is a snapshot: what it lists is what the farm renders, even when the artist keeps working
// after pressing Render. Each planned file gets a place in the pack's own folder, taken before it
// is hashed:
// - a `.blend` is copied (a reflink where the filesystem clones, else a real copy): Blender saves
//   by writing a new file and renaming it over the old one, and the copy keeps the old scene;
// - any other file is hard-linked: no bytes are copied, and the link keeps the packed contents
//   through a rename, a move, a deletion, or a save that replaces the file (most image editors);
// - where a link is impossible (another filesystem, a filesystem without links) the file is read
//   in place at upload time.
// A file written in place (same inode) changes under its link too; checkSnapshot catches that,
// and a missing in-place file, before each part is sent (the upload then fails: pack again).
// A .blend packed again unchanged while an earlier pack still holds its copy is not copied again:
// the new pack links that copy (reuse). The real copies of all packs taken at once share one
// CopyBudget, so concurrent packs cannot pass the store's bound between them.
import { constants } from 'node:fs';
import { copyFile, link, mkdir, realpath, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { DaemonError } from '../errors.js';
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

export interface Snapshot {
  files: SnapshotFile[];
  /** Bytes really copied (plain copies; reflinks and links share the artist's blocks). */
  copiedBytes: number;
}

/**
 * The bytes of real copies the snapshots held at once may use, shared by every pack taken at the
 * same time: each copy takes its size before it is written, so two packs cannot both fit in the
 * room left for one. Whoever took bytes gives them back (a pack that failed, a discarded pack).
 */
export class CopyBudget {
  private used = 0;
  constructor(readonly limitBytes: number = Number.POSITIVE_INFINITY) {}

  /** Takes `bytes`; false, taking nothing, when they do not fit. */
  take(bytes: number): boolean {
    if (this.used + bytes > this.limitBytes) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }

  get usedBytes(): number {
    return this.used;
  }
}

export interface SnapshotOptions {
  /** Where the real copies take their bytes; a pack past it fails with PACK_FAILED. Default unlimited. */
  budget?: CopyBudget;
  /**
   * A copy an earlier pack holds of the same .blend, taken when the file had the planned stat;
   * linked instead of copied. Default none.
   */
  reuse?: (f: PlannedFile) => SnapshotFile | undefined;
  /** Files taken at once (links and stats overlap). Default 8. */
  concurrency?: number;
  signal?: AbortSignal;
}

/** Codes of link(2) meaning "no link here", not "something is wrong": the file is read in place. */
const NO_LINK = new Set(['EXDEV', 'EPERM', 'EACCES', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EINVAL']);

/** A .blend (the scene or a library): copied, since the artist's next save replaces it. */
export const isBlend = (name: string): boolean => /\.blend$/i.test(name);

/**
 * Takes every planned file into `dir` (created), in plan order. PACK_FAILED when a file changed
 * or vanished since it was planned (it was being saved: pack again), when the copies do not fit in
 * the budget, or when the folder cannot be written. The snapshot's `copiedBytes` stay taken from
 * the budget (its owner gives them back); a failed call gives back what it took.
 */
export async function takeSnapshot(
  files: readonly PlannedFile[],
  dir: string,
  options: SnapshotOptions = {},
): Promise<Snapshot> {
  await mkdir(dir, { recursive: true }).catch((err: unknown) => {
    throw packFailed(
      `The daemon's pack folder "${dir}" cannot be created (${(err as Error).message}); check its free space ` +
        `and permissions, then retry.`,
      { file: dir },
    );
  });
  const budget = options.budget ?? new CopyBudget();
  const out = new Array<SnapshotFile>(files.length);
  let copied = 0;
  const reserve = (f: PlannedFile): void => {
    if (!budget.take(f.size)) {
      throw packFailed(
        `The .blend files of this pack do not fit in the daemon's pack store (${budget.limitBytes} bytes of ` +
          `copies at most, with the packs waiting to be sent): submit or discard the waiting packs, then pack ` +
          `again.`,
        { file: f.source, limitBytes: budget.limitBytes },
      );
    }
    copied += f.size;
  };
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < files.length && !failure) {
      const i = next++;
      const f = files[i] as PlannedFile;
      const dest = path.join(dir, `${i}${path.extname(f.name).slice(0, 16)}`);
      try {
        options.signal?.throwIfAborted();
        out[i] = isBlend(f.name)
          ? ((await reuseCopy(f, dest, options.reuse?.(f), reserve)) ?? (await copyBlend(f, dest, reserve)))
          : await linkFile(f, dest);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  // Every worker ends before the bytes go back: none takes more once they are counted.
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 8, files.length)) }, worker));
  if (failure) {
    budget.give(copied);
    throw failure.error;
  }
  return { files: out, copiedBytes: copied };
}

/**
 * Throws PACK_CHANGED when the file the upload reads no longer looks as it did when the pack was
 * taken (another size or modification time, another file, or none): it was written in place after
 * packing, or, read in place, moved or deleted.
 */
export async function checkSnapshot(file: SnapshotFile): Promise<void> {
  const now = await stat(file.path, { bigint: true }).catch(() => null);
  if (now && Number(now.size) === file.size && now.mtimeNs === file.mtimeNs && identityOf(now) === file.identity)
    return;
  throw changedAfterPacking(file.source, now ? 'was changed' : 'was moved or deleted');
}

/** PACK_CHANGED naming the artist's file. */
export function changedAfterPacking(source: string, what: string): DaemonError {
  return new DaemonError(
    'PACK_CHANGED',
    `"${source}" ${what} after the project was packed, so the farm would not render what was packed: pack ` +
      `again (press Render again), then submit.`,
    { file: source },
  );
}

async function copyBlend(f: PlannedFile, dest: string, reserve: (f: PlannedFile) => void): Promise<SnapshotFile> {
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
async function reuseCopy(
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

async function linkFile(f: PlannedFile, dest: string): Promise<SnapshotFile> {
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

function identityOf(s: { dev: bigint; ino: bigint }): string | undefined {
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
