import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { link, mkdir, open, readdir, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { addAbortSignal, type Readable } from 'node:stream';
import type { FileType } from '../../../shared/api/upload.js';
import {
  ObjectExistsError,
  ObjectTooLargeError,
  type ObjectStorage,
  type PutFileOptions,
  type PutOptions,
  type StoredObject,
} from '../../ports/storage.js';
import type { UrlSigner } from './url-signer.js';

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._ -]{0,254}$/;

/** Object keys are `/`-joined segments; nothing that could climb out of the root is accepted. */
export function isValidKey(key: string): boolean {
  const parts = key.split('/');
  return parts.length >= 1 && parts.length <= 16 && parts.every((p) => SEGMENT.test(p) && p !== '.' && p !== '..');
}

/**
 * Object storage on the local filesystem. Writes go to a temporary file in the same filesystem
 * and are hard-linked into place once complete and synced, so a reader never sees half an
 * object and an existing object is never overwritten.
 */
export class FsObjectStorage implements ObjectStorage {
  private readonly tmpDir: string;

  constructor(
    private readonly root: string,
    private readonly signer: UrlSigner,
    /** Origin of the service, known only once it listens. */
    private readonly publicUrl: () => string,
  ) {
    this.tmpDir = path.join(root, '.tmp');
  }

  async init(): Promise<void> {
    await mkdir(this.tmpDir, { recursive: true });
    // Leftovers of writes interrupted by a crash are never visible objects: drop them.
    await rm(this.tmpDir, { recursive: true, force: true });
    await mkdir(this.tmpDir, { recursive: true });
  }

  filePath(key: string): string {
    if (!isValidKey(key)) throw new Error(`invalid object key: ${key}`);
    return path.join(this.root, ...key.split('/'));
  }

  private url(method: 'GET' | 'PUT', key: string, expiresAt: Date, params: Record<string, string>): string {
    const q = this.signer.sign({ method, key, expiresAt: Math.floor(expiresAt.getTime() / 1000), params });
    return `${this.publicUrl()}/storage/${key.split('/').map(encodeURIComponent).join('/')}?${q}`;
  }

  async presignPut(key: string, opts: { expiresAt: Date; fileType: FileType }): Promise<string> {
    return this.url('PUT', key, opts.expiresAt, { ft: opts.fileType });
  }

  async presignGet(key: string, opts: { expiresAt: Date; fileName: string }): Promise<string> {
    return this.url('GET', key, opts.expiresAt, { fn: opts.fileName });
  }

  async put(key: string, body: Readable, opts: PutOptions = {}): Promise<{ size: number; sha256: string }> {
    const final = this.filePath(key);
    const tmp = path.join(this.tmpDir, randomUUID());
    try {
      const fh = await open(tmp, 'wx');
      let written: { size: number; sha256: string };
      try {
        written = await writeSynced(fh, body, opts.maxBytes ?? Number.POSITIVE_INFINITY, opts.sync ?? true);
      } finally {
        await fh.close();
      }
      await linkInto(tmp, final, key);
      return written;
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
  }

  async putFile(key: string, file: string, opts: PutFileOptions = {}): Promise<{ size: number }> {
    const final = this.filePath(key);
    opts.signal?.throwIfAborted();
    let size: number;
    if (opts.sync ?? true) {
      const fh = await open(file, 'r');
      try {
        size = (await fh.stat()).size;
        // The link makes the object visible at once: its bytes must be on disk first, as with put.
        await fh.datasync();
      } finally {
        await fh.close();
      }
    } else {
      size = (await stat(file)).size;
    }
    opts.signal?.throwIfAborted();
    try {
      await linkInto(file, final, key);
    } catch (err) {
      // Another disk (work folder and store apart): copied instead.
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      const body = createReadStream(file);
      return {
        size: (await this.put(key, opts.signal ? addAbortSignal(opts.signal, body) : body, { sync: opts.sync ?? true }))
          .size,
      };
    }
    return { size };
  }

  async persist(keys: readonly string[]): Promise<void> {
    // Several syncs in flight let the filesystem's journal take them in one commit.
    let next = 0;
    const worker = async () => {
      while (next < keys.length) {
        const file = this.filePath(keys[next++]!);
        let fh: FileHandle;
        try {
          fh = await open(file, 'r');
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
          throw err;
        }
        try {
          await fh.datasync();
        } finally {
          await fh.close();
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PERSIST_AT_ONCE, keys.length) }, worker));
  }

  async get(key: string): Promise<Readable> {
    return createReadStream(this.filePath(key));
  }

  async stat(key: string): Promise<StoredObject | undefined> {
    try {
      const s = await stat(this.filePath(key));
      return s.isFile() ? { size: s.size } : undefined;
    } catch {
      return undefined;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.filePath(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    await rm(this.filePath(prefix.replace(/\/+$/, '')), { recursive: true, force: true });
  }

  async list(prefix: string): Promise<{ key: string; size: number }[]> {
    const base = prefix.replace(/\/+$/, '');
    const dir = this.filePath(base);
    const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
    const files = entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
    const out = await Promise.all(
      files.map(async (f) => ({
        key: `${base}/${path.relative(dir, f).split(path.sep).join('/')}`,
        size: (await stat(f)).size,
      })),
    );
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
}

/**
 * Links `from` to `final`, making `final`'s folder only when it is missing (the common case costs
 * one system call). An existing `final` is never replaced: ObjectExistsError.
 */
async function linkInto(from: string, final: string, key: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      await link(from, final);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new ObjectExistsError(key);
      // ENOENT is either the folder (made now, then tried once more) or `from` itself (thrown then).
      if (code !== 'ENOENT' || tries > 0) throw err;
      await mkdir(path.dirname(final), { recursive: true });
    }
  }
}

/** Objects synced at once by persist. */
const PERSIST_AT_ONCE = 8;
/** Bytes gathered before one writev: socket reads are ~64 KiB, and a syscall per read costs. */
const BATCH_BYTES = 4 * 1024 * 1024;
/** Bytes between background fdatasyncs, so writeback runs alongside the upload, not all at the end. */
const SYNC_EVERY_BYTES = 64 * 1024 * 1024;

/** Streams `body` into `fh` in batches, hashing as it goes; returns once the data is on disk (`sync`). */
async function writeSynced(
  fh: FileHandle,
  body: Readable,
  maxBytes: number,
  sync: boolean,
): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  let batch: Buffer[] = [];
  let batchBytes = 0;
  let sinceSync = 0;
  let syncing: Promise<void> = Promise.resolve();
  const flush = async () => {
    if (batchBytes === 0) return;
    const bufs = batch;
    batch = [];
    sinceSync += batchBytes;
    batchBytes = 0;
    await fh.writev(bufs);
    if (sync && sinceSync >= SYNC_EVERY_BYTES) {
      sinceSync = 0;
      await syncing;
      syncing = fh.datasync();
    }
  };
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw new ObjectTooLargeError(maxBytes);
      hash.update(chunk);
      batch.push(chunk);
      batchBytes += chunk.length;
      if (batchBytes >= BATCH_BYTES) await flush();
    }
    await flush();
  } finally {
    // Never leave a sync running on a handle the caller is about to close.
    await syncing.catch(() => undefined);
  }
  // Each sync is a journal commit, which stalls every other writer of the disk (Blender saving
  // its next frame): only what must survive a crash pays for it.
  if (sync) await fh.sync();
  return { size, sha256: hash.digest('hex') };
}
