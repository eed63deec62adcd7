// Resumable single PUTs on the service's own file storage (extension resumable-uploads): the bytes
// of a PUT whose connection broke are kept under `<root>/.partial/`, so the client sends only the
// rest (`Content-Range: bytes N-(T-1)/T`) instead of the whole file again. The spec's PUT is
// unchanged: a PUT without Content-Range starts the file over. One PUT of a key runs at a time on
// this instance, and the newest wins: a resume may arrive before the service has noticed that the
// connection of the one before it broke, so that one is stopped and its bytes kept up to where it
// got. A kept file is only ever a prefix of what its PUT announced (the body is written in order,
// and a resume appends exactly at its start), and the object itself appears only once complete.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rm, stat, truncate, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** What a kept file holds: the bytes received so far of a PUT announcing `totalBytes`. */
export interface PartialState {
  receivedBytes: number;
  totalBytes: number;
}

/** A resume that does not continue what is kept: the client must start from `receivedBytes` (or 0). */
export class ResumeMismatchError extends Error {
  constructor(
    readonly receivedBytes: number,
    readonly totalBytes: number | null,
  ) {
    super(`the upload holds ${receivedBytes} bytes${totalBytes === null ? '' : ` of ${totalBytes}`}`);
  }
}

/** A body that ended before the bytes its PUT announced: kept, to be resumed. */
export class BodyEndedShortError extends Error {}

/** A complete file, synced: link it into place, then `drop` the key. */
export interface ReceivedFile {
  file: string;
  size: number;
  sha256: string;
}

/** Bytes gathered before one writev (socket reads are ~64 KiB; a syscall per read costs). */
const BATCH_BYTES = 4 * 1024 * 1024;
/** Bytes between background fdatasyncs, so writeback runs alongside the upload, not all at the end. */
const SYNC_EVERY_BYTES = 64 * 1024 * 1024;

interface Running {
  stop: () => void;
  done: Promise<void>;
}

export class PartialUploads {
  readonly dir: string;
  private readonly running = new Map<string, Running>();

  constructor(root: string) {
    this.dir = path.join(root, '.partial');
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  private base(key: string): string {
    return path.join(this.dir, createHash('sha256').update(key).digest('hex'));
  }

  /** What is kept of `key`'s PUT, or undefined when nothing is. */
  async state(key: string): Promise<PartialState | undefined> {
    const base = this.base(key);
    const meta = await readFile(`${base}.json`, 'utf8').then(
      (t) => JSON.parse(t) as { key?: unknown; total?: unknown },
      () => undefined,
    );
    if (meta?.key !== key || typeof meta.total !== 'number') return undefined;
    const size = (await stat(`${base}.part`).catch(() => undefined))?.size;
    if (size === undefined) return undefined;
    return { receivedBytes: Math.min(size, meta.total), totalBytes: meta.total };
  }

  /**
   * Receives bytes [start, total) of `key`'s file from `body`. `start` 0 begins the file anew
   * (anything kept is dropped); a larger `start` continues the kept bytes, which must reach it
   * and belong to a PUT of the same `total` (else ResumeMismatchError, nothing read). Resolves
   * with the complete file; when the body fails or ends short it keeps what arrived and rejects.
   * `stop` ends the body: it is called when a newer PUT of the key arrives.
   */
  receive(key: string, body: Readable, o: { start: number; total: number; stop: () => void }): Promise<ReceivedFile> {
    return this.exclusive(key, o.stop, async () => {
      const base = this.base(key);
      const part = `${base}.part`;
      const hash = createHash('sha256');
      if (o.start === 0) {
        await writeFile(`${base}.json`, JSON.stringify({ key, total: o.total }));
        await writeFile(part, '');
      } else {
        const kept = await this.state(key);
        if (!kept || kept.totalBytes !== o.total || kept.receivedBytes < o.start)
          throw new ResumeMismatchError(kept?.receivedBytes ?? 0, kept?.totalBytes ?? null);
        // Bytes kept past the start are sent again: the resume's own copy of them wins.
        await truncate(part, o.start);
        await hashPrefix(part, o.start, hash);
      }
      const fh = await open(part, 'a');
      try {
        const size = o.start + (await append(fh, body, hash));
        if (size !== o.total) throw new BodyEndedShortError(`the body ended after ${size} of ${o.total} bytes`);
        await fh.sync();
        return { file: part, size, sha256: hash.digest('hex') };
      } finally {
        await fh.close();
      }
    });
  }

  /** Forgets `key`'s kept bytes (its object is in place, or its upload is over). */
  async drop(key: string): Promise<void> {
    const base = this.base(key);
    await rm(`${base}.part`, { force: true });
    await rm(`${base}.json`, { force: true });
  }

  /** Removes kept files untouched for `olderThanMs` (their upload URL has expired); answers how many. */
  async sweep(olderThanMs: number, now = Date.now()): Promise<number> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    let removed = 0;
    for (const name of names) {
      const file = path.join(this.dir, name);
      const s = await stat(file).catch(() => undefined);
      if (!s || now - s.mtimeMs < olderThanMs) continue;
      await rm(file, { force: true });
      removed++;
    }
    return removed;
  }

  /** Runs `fn` once every earlier PUT of `key` here has been stopped and has ended. */
  private async exclusive<T>(key: string, stop: () => void, fn: () => Promise<T>): Promise<T> {
    const before = this.running.get(key);
    let finished!: () => void;
    const entry: Running = { stop, done: new Promise<void>((r) => (finished = r)) };
    this.running.set(key, entry);
    try {
      if (before) {
        before.stop();
        await before.done;
      }
      return await fn();
    } finally {
      if (this.running.get(key) === entry) this.running.delete(key);
      finished();
    }
  }
}

/** Feeds the first `length` bytes of `file` into `hash`. */
async function hashPrefix(file: string, length: number, hash: Hash): Promise<void> {
  if (length === 0) return;
  for await (const chunk of createReadStream(file, { start: 0, end: length - 1 })) hash.update(chunk as Buffer);
}

/**
 * Appends `body` to `fh` in batches, hashing as it goes; answers the bytes appended. When the body
 * fails, what it gave is still written (it is the prefix a resume continues), then the error is thrown.
 */
async function append(fh: FileHandle, body: Readable, hash: Hash): Promise<number> {
  let size = 0;
  let batch: Buffer[] = [];
  let batchBytes = 0;
  let sinceSync = 0;
  let syncing: Promise<void> = Promise.resolve();
  const flush = async (): Promise<void> => {
    if (batchBytes === 0) return;
    const bufs = batch;
    sinceSync += batchBytes;
    batch = [];
    batchBytes = 0;
    await fh.writev(bufs);
    if (sinceSync >= SYNC_EVERY_BYTES) {
      sinceSync = 0;
      await syncing;
      syncing = fh.datasync();
    }
  };
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      hash.update(chunk);
      batch.push(chunk);
      batchBytes += chunk.length;
      if (batchBytes >= BATCH_BYTES) await flush();
    }
    await flush();
  } catch (err) {
    await flush().catch(() => undefined);
    throw err;
  } finally {
    await syncing.catch(() => undefined);
  }
  return size;
}
