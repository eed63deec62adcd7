// Streams files into a zip with archiver 8, reading each file once: its first bytes decide
// store vs deflate (compressibility.ts) and go out first, the rest follows as a stream, and the
// SHA-256 and size are taken from the same bytes on their way in. Entries are appended one at a
// time (archiver starts reading every appended stream at once, which would open every file), so
// memory stays at a few chunks whatever the file sizes.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { zipArchiveClass } from '../../zip/archiver.js';
import { chooseCompression, SAMPLE_BYTES } from './compressibility.js';
import { packFailed } from './layout.js';

/** Read size: large enough that per-chunk costs (hash, CRC, stream hops) vanish, small enough for memory. */
const CHUNK = 1024 * 1024;
/** zlib output buffer: its 16 KiB default means one thread-pool round trip per 16 KiB of output. */
const ZLIB_CHUNK = 256 * 1024;

export interface ZipInput {
  /** Archive path. */
  name: string;
  /** Absolute file to read. */
  source: string;
  /** Size when planned (for progress); the entry records what was really read. */
  size: number;
  mtime: Date;
}

export interface ZipWritten {
  name: string;
  size: number;
  sha256: string;
  deflated: boolean;
}

export interface WriteZipOptions {
  /** zlib level for files worth deflating. Default 6 (zip's own default; uploads are usually slower than packing). */
  level?: number;
  signal?: AbortSignal;
  /** Called as bytes of the files are read: bytes so far, planned total. Default none. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
  /** Last entry, built once every file is in (a manifest needs their checksums). Default none. */
  trailer?: { name: string; data: (written: readonly ZipWritten[]) => Buffer };
}

/**
 * Writes `inputs` (in that order) and the trailer to a new file `out` (created exclusively: the
 * caller passes a temporary name and renames it). A file that cannot be read fails the whole
 * archive with PACK_FAILED; an abort rejects with the signal's reason. The partial file is left
 * for the caller to remove.
 */
export async function writeZip(
  out: string,
  inputs: readonly ZipInput[],
  opts: WriteZipOptions = {},
): Promise<{ entries: ZipWritten[]; bytes: number }> {
  opts.signal?.throwIfAborted();
  const ZipArchive = await zipArchiveClass();
  const archive = new ZipArchive({ zlib: { level: opts.level ?? 6, chunkSize: ZLIB_CHUNK }, highWaterMark: CHUNK });
  const total = inputs.reduce((n, f) => n + f.size, 0);
  let done = 0;

  let failure: unknown;
  let rejectFailed: (err: unknown) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => (rejectFailed = reject));
  failed.catch(() => undefined);
  const fail = (err: unknown) => {
    if (failure !== undefined) return;
    failure = err;
    rejectFailed(err);
    archive.destroy(err instanceof Error ? err : new Error(String(err)));
  };
  // archiver reports an unreadable file as a 'warning' and leaves it out: an incomplete archive is a failure.
  archive.on('warning', fail);
  archive.on('error', fail);
  const onAbort = () => fail(opts.signal?.reason);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const piped = pipeline(archive, createWriteStream(out, { flags: 'wx', highWaterMark: CHUNK })).catch(
    (err: unknown) => {
      fail(err);
    },
  );

  /** Appends one entry and waits until archiver has written it (its 'entry' event). */
  const appendEntry = async (source: Buffer | Readable, name: string, store: boolean, date: Date): Promise<void> => {
    const written = new Promise<void>((resolve) => {
      const onEntry = (data: { name?: string }) => {
        if (data.name !== name) return;
        archive.off('entry', onEntry);
        resolve();
      };
      archive.on('entry', onEntry);
    });
    archive.append(source, { name, store, date });
    await Promise.race([written, failed]);
  };

  try {
    const entries: ZipWritten[] = [];
    for (const input of inputs) {
      if (failure !== undefined) throw failure;
      entries.push(
        await addFile(input, appendEntry, fail, (n) => {
          done += n;
          opts.onProgress?.(done, total);
        }),
      );
    }
    if (opts.trailer) {
      const data = opts.trailer.data(entries);
      await appendEntry(
        data,
        opts.trailer.name,
        !chooseCompression(opts.trailer.name, data.subarray(0, SAMPLE_BYTES)).deflate,
        new Date(),
      );
    }
    void archive.finalize().catch(fail);
    await Promise.race([piped, failed]);
    if (failure !== undefined) throw failure;
    return { entries, bytes: archive.pointer() };
  } catch (err) {
    fail(err);
    await piped;
    throw failure;
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

type AppendEntry = (source: Buffer | Readable, name: string, store: boolean, date: Date) => Promise<void>;

async function addFile(
  input: ZipInput,
  appendEntry: AppendEntry,
  fail: (err: unknown) => void,
  progress: (bytes: number) => void,
): Promise<ZipWritten> {
  const unreadable = (err: unknown) =>
    packFailed(
      `"${input.source}" could not be read (${(err as Error).message}); check that it exists and is ` +
        `readable, then retry.`,
      { file: input.source },
    );
  let fh: FileHandle;
  try {
    fh = await open(input.source, 'r');
  } catch (err) {
    throw unreadable(err);
  }
  let body: Readable | undefined;
  try {
    const head = Buffer.allocUnsafe(SAMPLE_BYTES);
    const { bytesRead } = await fh.read(head, 0, SAMPLE_BYTES, 0).catch((err: unknown) => {
      throw unreadable(err);
    });
    const sample = head.subarray(0, bytesRead);
    const { deflate } = chooseCompression(input.name, sample);
    const hash = createHash('sha256').update(sample);
    let size = sample.length;
    progress(sample.length);
    if (bytesRead < SAMPLE_BYTES) {
      // The whole file is in hand: archiver takes it as a buffer, without a stream per small file.
      await appendEntry(sample, input.name, !deflate, input.mtime);
    } else {
      const handle = fh;
      const rest = async function* () {
        yield sample;
        for await (const chunk of handle.createReadStream({
          start: bytesRead,
          highWaterMark: CHUNK,
          autoClose: false,
        }) as AsyncIterable<Buffer>) {
          hash.update(chunk);
          size += chunk.length;
          progress(chunk.length);
          yield chunk;
        }
      };
      body = Readable.from(rest(), { objectMode: false, highWaterMark: CHUNK });
      // archiver pipes the stream on without its errors: a read error must fail the archive here.
      body.once('error', (err) => fail(unreadable(err)));
      await appendEntry(body, input.name, !deflate, input.mtime);
    }
    return { name: input.name, size, sha256: hash.digest('hex'), deflated: deflate };
  } finally {
    body?.destroy();
    await fh.close().catch(() => undefined);
  }
}
