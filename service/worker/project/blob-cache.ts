// A worker's cache of verified blobs (the content-addressed upload extension), keyed by sha256
// and size, so a texture a machine already has is not downloaded again for the next job. Each
// blob is fetched through a sha256 check into a temporary file, synced, made read-only (0444:
// projects are hard links to it, and a Blender that wrote to its copy must not reach the cache)
// and linked into place, its modification time set to a fixed seal (SEALED_MTIME). Several render slots, and several
// worker processes on one data folder, share it: one process downloads a blob once however many of its prepares want
// it; two
// processes may both download it, and the second link finds the first's identical bytes. The
// cache keeps under its cap by removing the least recently used blobs (by access time: a hit
// touches it, and reads do), never those a prepare of this process is using; a blob another
// process removed meanwhile is fetched again by whoever misses it.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { link, mkdir, open, readdir, stat, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobRef } from '../../../shared/api/blob-upload.js';
import type { ObjectStorage } from '../../ports/storage.js';
import { UnpackAbortedError } from '../../../zip/errors.js';
import { BlobIntegrityError } from './blob-integrity.js';

export interface BlobCacheOptions {
  /**
   * Folder of cached blobs (`ab/<sha256>-<size>`). Default `<dataDir>/blob-cache`, beside the
   * work folder: on the same disk, a project's files are hard links into the cache, not copies.
   */
  dir: string;
  /** Most bytes the cache keeps; beyond it the least recently used blobs go. Default 50 GiB. */
  maxBytes: number;
}

/** What one prepare took from the cache: for logs, and for tests counting downloads. */
export interface BlobFetchReport {
  /** Distinct blobs the cache held already. */
  hits: number;
  /** Distinct blobs it lacked (downloaded by this prepare, or by another that was already at it). */
  misses: number;
  /** Bytes this prepare downloaded. */
  bytesFetched: number;
}

/** Where blobs come from: object storage, read only. */
export type BlobSource = Pick<ObjectStorage, 'get'>;

/**
 * The modification time of every cached file (2000-01-01). A write through any of its links
 * changes it, even a write by root, whom the 0444 mode does not stop: a lookup then drops the file.
 */
const SEALED_MTIME = 946_684_800;
/** Trimming goes below the cap by a tenth, so a full cache is not scanned after every job. */
const LOW_WATER = 0.9;
/** Temporary files of downloads that died with their process are removed after this long. */
const STALE_PART_MS = 3600_000;
const BLOB_NAME = /^[0-9a-f]{64}-\d+$/;
const PART_NAME = /^\.[0-9a-f]{64}-\d+\.[0-9a-f]+\.part$/;
/** Downloads of one prepare at a time (S3 serves parallel GETs well; a local disk does not mind). */
const FETCH_CONCURRENCY = 4;

const idOf = (b: BlobRef): string => `${b.sha256}-${b.size}`;
const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;

export class BlobCache {
  /** Blobs prepares of this process are using, with how many: never evicted. */
  private readonly pins = new Map<string, number>();
  private readonly downloads = new Map<string, Promise<void>>();
  /** Bytes in the cache as this process knows it: its last scan plus what it added since. */
  private estimate: number | undefined;

  constructor(readonly opts: BlobCacheOptions) {}

  get dir(): string {
    return this.opts.dir;
  }

  pathOf(b: BlobRef): string {
    return path.join(this.opts.dir, b.sha256.slice(0, 2), idOf(b));
  }

  /**
   * Pins `blobs` until `release`, and sorts them into those the cache holds (touched: now the most
   * recently used) and those it lacks. A cached file whose size, mode or sealed modification time
   * changed was written through a link, and is dropped.
   */
  async lookup(blobs: readonly BlobRef[]): Promise<{ held: BlobRef[]; missing: BlobRef[] }> {
    await mkdir(this.opts.dir, { recursive: true });
    for (const b of blobs) this.pins.set(idOf(b), (this.pins.get(idOf(b)) ?? 0) + 1);
    const held: BlobRef[] = [];
    const missing: BlobRef[] = [];
    const now = new Date();
    for (const b of blobs) {
      const file = this.pathOf(b);
      try {
        const s = await stat(file);
        if (s.isFile() && s.size === b.size && (s.mode & 0o777) === 0o444 && s.mtimeMs === SEALED_MTIME * 1000) {
          await utimes(file, now, SEALED_MTIME);
          held.push(b);
          continue;
        }
        await unlink(file).catch(() => undefined);
      } catch (err) {
        if (errno(err) !== 'ENOENT') throw err;
      }
      missing.push(b);
    }
    return { held, missing };
  }

  release(blobs: readonly BlobRef[]): void {
    for (const b of blobs) {
      const n = (this.pins.get(idOf(b)) ?? 1) - 1;
      if (n > 0) this.pins.set(idOf(b), n);
      else this.pins.delete(idOf(b));
    }
  }

  /**
   * Downloads `missing` into the cache, each verified. A blob another prepare of this process is
   * downloading is waited for, not fetched twice. Returns the bytes this call downloaded. Throws
   * BlobIntegrityError for bytes that do not match, UnpackAbortedError when `signal` fires.
   */
  async fetch(
    storage: BlobSource,
    keyOf: (b: BlobRef) => string,
    missing: readonly BlobRef[],
    signal: AbortSignal,
  ): Promise<number> {
    const queue = [...missing];
    let fetched = 0;
    let failure: { err: unknown } | undefined;
    const worker = async (): Promise<void> => {
      for (let b = queue.shift(); b && !failure; b = queue.shift()) {
        try {
          if (signal.aborted) throw new UnpackAbortedError(signal.reason);
          // Not `fetched += await ...`: that reads `fetched` before the wait, losing the other workers' sums.
          const n = await this.fetchOne(storage, keyOf(b), b, signal);
          fetched += n;
        } catch (err) {
          failure ??= { err };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(FETCH_CONCURRENCY, queue.length) }, worker));
    if (this.estimate !== undefined) this.estimate += fetched;
    if (failure) throw failure.err;
    return fetched;
  }

  private async fetchOne(storage: BlobSource, key: string, b: BlobRef, signal: AbortSignal): Promise<number> {
    for (let running = this.downloads.get(idOf(b)); running; running = this.downloads.get(idOf(b))) {
      try {
        await running;
        return 0;
      } catch {
        // That download failed for its own prepare (its job may have been canceled): try ourselves,
        // unless yet another prepare started over meanwhile.
      }
    }
    const download = this.download(storage, key, b, signal).finally(() => this.downloads.delete(idOf(b)));
    this.downloads.set(idOf(b), download);
    await download;
    return b.size;
  }

  private async download(storage: BlobSource, key: string, b: BlobRef, signal: AbortSignal): Promise<void> {
    const final = this.pathOf(b);
    await mkdir(path.dirname(final), { recursive: true });
    const tmp = path.join(path.dirname(final), `.${idOf(b)}.${randomBytes(6).toString('hex')}.part`);
    try {
      const hash = createHash('sha256');
      let size = 0;
      const check = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          size += chunk.length;
          // Stop an object longer than its blob before it fills the disk.
          if (size > b.size) return cb(new BlobIntegrityError(b, { sha256: null, size }));
          hash.update(chunk);
          cb(null, chunk);
        },
      });
      try {
        await pipeline(await storage.get(key), check, createWriteStream(tmp, { flags: 'wx', mode: 0o600 }), { signal });
      } catch (err) {
        if (signal.aborted) throw new UnpackAbortedError(signal.reason);
        throw err;
      }
      const sha256 = hash.digest('hex');
      if (size !== b.size || sha256 !== b.sha256) throw new BlobIntegrityError(b, { sha256, size });
      const fh = await open(tmp, 'r');
      try {
        await fh.chmod(0o444);
        await fh.utimes(new Date(), SEALED_MTIME);
        // Synced before it is linked: after a crash, a cached blob is whole or absent.
        await fh.sync();
      } finally {
        await fh.close();
      }
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    try {
      await link(tmp, final);
    } catch (err) {
      // EEXIST: another process linked the same verified bytes first.
      if (errno(err) !== 'EEXIST') {
        await unlink(tmp).catch(() => undefined);
        throw err;
      }
    }
    await unlink(tmp);
  }

  /**
   * Trims when the cache, as this process counts it, is over its cap or would be with `incoming`
   * more bytes. The count starts with one scan and adds this process's downloads, so blobs other
   * processes added are seen at the next trim's scan.
   */
  async makeRoom(incoming = 0): Promise<void> {
    this.estimate ??= (await this.scan()).reduce((sum, f) => sum + f.size, 0);
    if (this.estimate + incoming > this.opts.maxBytes)
      await this.trim(Math.max(0, this.opts.maxBytes * LOW_WATER - incoming));
  }

  /**
   * Removes the least recently used blobs no prepare of this process is using until the cache
   * holds at most `target` bytes, and temporary files of downloads that died. Returns what is left.
   */
  async trim(target = this.opts.maxBytes * LOW_WATER): Promise<{ bytes: number; removed: number }> {
    const files = (await this.scan()).sort((a, b) => a.usedMs - b.usedMs);
    let bytes = files.reduce((sum, f) => sum + f.size, 0);
    let removed = 0;
    for (const f of files) {
      if (bytes <= target) break;
      if (this.pins.has(f.id)) continue;
      try {
        await unlink(f.file);
      } catch (err) {
        if (errno(err) !== 'ENOENT') throw err;
      }
      bytes -= f.size;
      removed++;
    }
    this.estimate = bytes;
    return { bytes, removed };
  }

  /** Every cached blob with its size and last use; stale temporary files are removed on the way. */
  private async scan(): Promise<{ id: string; file: string; size: number; usedMs: number }[]> {
    const found: { id: string; file: string; size: number; usedMs: number }[] = [];
    const fanOut = await readdir(this.opts.dir).catch((err: unknown) =>
      errno(err) === 'ENOENT' ? [] : Promise.reject(err),
    );
    for (const sub of fanOut) {
      if (!/^[0-9a-f]{2}$/.test(sub)) continue;
      const folder = path.join(this.opts.dir, sub);
      for (const name of await readdir(folder).catch(() => [] as string[])) {
        const file = path.join(folder, name);
        const s = await stat(file).catch(() => undefined);
        if (!s?.isFile()) continue;
        if (BLOB_NAME.test(name)) found.push({ id: name, file, size: s.size, usedMs: s.atimeMs });
        else if (PART_NAME.test(name) && Date.now() - s.mtimeMs > STALE_PART_MS)
          await unlink(file).catch(() => undefined);
      }
    }
    return found;
  }
}
