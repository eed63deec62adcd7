// A pack's snapshot and checksums, taken together: the packer (packer.ts) keeps what this
// returns, and the upload reads the snapshot through uploadSourceOf, checked around each part.
import path from 'node:path';
import type { PackedFile } from '../../shared/daemon/submission-schemas.js';
import type { PackProgress, UploadSource } from '../ports.js';
import type { HashCache } from './hash-cache.js';
import { hashFiles } from './hash-files.js';
import type { PackPlan } from './pack-project.js';
import { checkSnapshot, type CopyBudget, isBlend, takeSnapshot, type Snapshot } from './snapshot.js';
import type { SnapshotFile } from './snapshot-file.js';

/** One file's checksums as hashFiles gives them. */
export type HashedFile = Awaited<ReturnType<typeof hashFiles>>[number];

/** What every pack of one packer shares while it is taken. */
export interface SnapshotShared {
  /** The bytes all snapshots may hold as real copies. */
  budget: CopyBudget;
  /** A copy a kept pack already holds of a .blend with the same stat, reused instead of copying. */
  reuse: (f: PackPlan['files'][number]) => SnapshotFile | undefined;
  /** Checksums of files packed before. */
  cache: HashCache;
}

/**
 * Takes the snapshot, then hashes it (so the checksums are those of what the upload sends), in
 * two streams that overlap: the linked files (no bytes copied) are hashed while the .blend files
 * are still being copied, which hides most of the copying's time. Results in plan order.
 */
export async function snapshotAndHash(
  files: PackPlan['files'],
  dir: string,
  shared: SnapshotShared,
  options: { signal?: AbortSignal; onProgress?: PackProgress },
): Promise<{ snapshot: Snapshot; hashed: HashedFile[] }> {
  const { budget, reuse, cache } = shared;
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  const total = files.reduce((n, f) => n + f.size, 0);
  const done = [0, 0];
  const groups = [
    files.map((f, i) => ({ f, i })).filter(({ f }) => !isBlend(f.name)),
    files.map((f, i) => ({ f, i })).filter(({ f }) => isBlend(f.name)),
  ];
  const outSnap = new Array<SnapshotFile>(files.length);
  const outHash = new Array<HashedFile>(files.length);
  const ended = await Promise.allSettled(
    groups.map(async (group, g) => {
      let taken: Snapshot | undefined;
      try {
        const part = group.map(({ f }) => f);
        taken = await takeSnapshot(part, path.join(dir, g === 0 ? 'l' : 'c'), { budget, reuse, signal });
        const files = taken.files;
        const sums = await hashFiles(
          part.map((f, k) => ({ ...f, readFrom: files[k] as SnapshotFile })),
          {
            cache,
            signal,
            onProgress: (d) => {
              done[g] = d;
              options.onProgress?.((done[0] ?? 0) + (done[1] ?? 0), total, 'hashing');
            },
          },
        );
        group.forEach(({ i }, k) => {
          outSnap[i] = files[k] as SnapshotFile;
          outHash[i] = sums[k] as (typeof outHash)[number];
        });
        return taken.copiedBytes;
      } catch (err) {
        // What this group copied goes back to the budget (a failed takeSnapshot gave back its own).
        budget.give(taken?.copiedBytes ?? 0);
        stop.abort(err);
        throw err;
      }
    }),
  );
  const copied = ended.map((e) => (e.status === 'fulfilled' ? e.value : 0)).reduce((n, c) => n + c, 0);
  const failed = ended.find((e): e is PromiseRejectedResult => e.status === 'rejected');
  if (failed) {
    budget.give(copied);
    throw failed.reason;
  }
  return { snapshot: { files: outSnap, copiedBytes: copied } as Snapshot, hashed: outHash };
}

/** The pack's files as the upload reads them: each from its snapshot, checked before and after each part. */
export function uploadSourceOf(files: readonly PackedFile[], snapshot: Snapshot): UploadSource {
  const bySnapshot = new Map(snapshot.files.map((f) => [f.path, f]));
  const bySource = new Map(snapshot.files.map((f) => [f.source, f]));
  return {
    // The manifest (the last file) is the packer's own and has no snapshot: it is read as is.
    files: files.map((f) => ({ ...f, source: bySource.get(f.source)?.path ?? f.source })),
    check: async (source) => {
      const taken = bySnapshot.get(source);
      if (taken) await checkSnapshot(taken);
    },
    original: (source) => bySnapshot.get(source)?.source ?? source,
  };
}
