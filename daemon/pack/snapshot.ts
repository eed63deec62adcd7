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
// CopyBudget, so concurrent packs cannot pass the store's bound between them. Taking one file:
// snapshot-file.ts.
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { DaemonError } from '../errors.js';
import { packFailed } from './layout.js';
import type { PlannedFile } from './pack-project.js';
import { copyBlend, identityOf, linkFile, reuseCopy, type SnapshotFile } from './snapshot-file.js';

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
