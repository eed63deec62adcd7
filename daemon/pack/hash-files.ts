// The SHA-256, size and compression choice of every file of a plan, for the content-addressed
// upload: a file the hash cache knows (same path, size, mtime, inode) is not read at all; any
// other is read once, its first bytes judged by compressibility.ts, and remembered.
import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { chooseCompression, SAMPLE_BYTES } from './compressibility.js';
import type { HashCache } from './hash-cache.js';
import { packFailed } from './layout.js';
import type { PlannedFile } from './pack-project.js';

/** Read size: per-read costs vanish beside the hashing, memory stays small. */
const CHUNK = 1024 * 1024;
/**
 * A file modified this recently may change again within its filesystem's timestamp resolution
 * (2 s on FAT) without its mtime moving: it is hashed, but not cached.
 */
const RACY_MS = 2000;

export interface HashedFile {
  /** Archive path. */
  name: string;
  source: string;
  /** Bytes read (or, from the cache, the size they had). */
  size: number;
  sha256: string;
  deflate: boolean;
}

/**
 * A planned file, and where to read it when that is not its source: the pack's snapshot of it
 * (daemon/pack/snapshot.ts) with that file's stat. The cache key stays the source's planned stat:
 * the snapshot was taken while the source still had it.
 */
export type HashInput = PlannedFile & { readFrom?: { path: string; mtimeNs: bigint; identity: string | undefined } };

export interface HashFilesOptions {
  /** Checksums of files read before. Default none: every file is read. */
  cache?: HashCache;
  signal?: AbortSignal;
  /** Bytes checked so far (cached files count at once) and in all. Default none. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
  /** Files read at once (overlaps opening small files). Default 4. */
  concurrency?: number;
}

/**
 * Checksums of `files`, in their order. An unreadable file fails with PACK_FAILED; an abort
 * rejects with the signal's reason.
 */
export async function hashFiles(files: readonly HashInput[], options: HashFilesOptions = {}): Promise<HashedFile[]> {
  options.signal?.throwIfAborted();
  await options.cache?.load();
  const total = files.reduce((n, f) => n + f.size, 0);
  let done = 0;
  const progress = (n: number): void => {
    done += n;
    options.onProgress?.(done, total);
  };
  const out: HashedFile[] = new Array<HashedFile>(files.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    const buffer = Buffer.allocUnsafe(CHUNK);
    while (next < files.length) {
      const i = next++;
      const f = files[i] as HashInput;
      const key = { path: f.source, size: f.size, mtimeNs: f.mtimeNs, identity: f.identity };
      const cached = options.cache?.get(key);
      if (cached) {
        out[i] = { name: f.name, source: f.source, size: f.size, sha256: cached.sha256, deflate: cached.deflate };
        progress(f.size);
        continue;
      }
      const read = await readFile(f, buffer, progress, options.signal);
      out[i] = read.file;
      if (read.unchanged && Date.now() - Number(f.mtimeNs / 1_000_000n) > RACY_MS)
        options.cache?.set(key, { sha256: read.file.sha256, deflate: read.file.deflate });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 4, files.length)) }, worker));
  return out;
}

/** Reads one file through `buffer`; `unchanged` when its stat after reading still matches the plan's. */
async function readFile(
  f: HashInput,
  buffer: Buffer,
  progress: (n: number) => void,
  signal?: AbortSignal,
): Promise<{ file: HashedFile; unchanged: boolean }> {
  const unreadable = (err: unknown) =>
    packFailed(
      `"${f.source}" could not be read (${(err as Error).message}); check that it exists and is readable, then retry.`,
      { file: f.source },
    );
  let fh: FileHandle;
  try {
    fh = await open(f.readFrom?.path ?? f.source, 'r');
  } catch (err) {
    throw unreadable(err);
  }
  try {
    const hash = createHash('sha256');
    let size = 0;
    let deflate = false;
    for (;;) {
      signal?.throwIfAborted();
      // The first read is the sample compressibility.ts judges; later ones fill the whole buffer.
      const want = size === 0 ? SAMPLE_BYTES : CHUNK;
      const { bytesRead } = await fh.read(buffer, 0, want, size).catch((err: unknown) => {
        throw unreadable(err);
      });
      const chunk = buffer.subarray(0, bytesRead);
      if (size === 0) deflate = chooseCompression(f.name, chunk).deflate;
      if (bytesRead === 0) break;
      hash.update(chunk);
      size += bytesRead;
      progress(bytesRead);
    }
    const after = await fh.stat({ bigint: true }).catch(() => null);
    const expected = f.readFrom ?? f;
    const unchanged =
      after !== null &&
      Number(after.size) === size &&
      size === f.size &&
      after.mtimeNs === expected.mtimeNs &&
      `${after.dev}:${after.ino}` === expected.identity;
    return { file: { name: f.name, source: f.source, size, sha256: hash.digest('hex'), deflate }, unchanged };
  } finally {
    await fh.close().catch(() => undefined);
  }
}
