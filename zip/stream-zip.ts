// Streams ZIP archives (archiver 8) into a consumer such as ObjectStorage.put, so an archive of
// any size is never held in memory or written to local disk first.
import { open, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import type { Readable } from 'node:stream';
import { zipArchiveClass, type ZipArchive } from './archiver.js';

export interface ZipEntry {
  /** Local file to read. */
  path: string;
  /** Name inside the archive (`/`-separated, relative). */
  name: string;
}

export interface StreamZipOptions {
  /** Files up to this size are read whole and handed to archiver as buffers. Default 4 MiB. */
  wholeFileMax?: number;
  /** Most bytes of such files read but not yet written into the archive. Default 32 MiB. */
  readAheadBytes?: number;
}

/** Reads started ahead of the archive (they overlap archiver's work on the entries before them). */
const READS_AHEAD = 4;

/**
 * Writes a ZIP of `entries` into `sink` as it is produced. Entries are STORED (no compression:
 * rendered PNG/JPEG/EXR frames are already compressed, and deflating them only costs CPU).
 * A missing or unreadable file fails the archive instead of being skipped. `signal` aborts it:
 * the stream given to `sink` then errors, so a storage write never completes.
 */
export async function streamZip<T>(
  entries: readonly ZipEntry[],
  sink: (body: Readable) => Promise<T>,
  signal?: AbortSignal,
  opts: StreamZipOptions = {},
): Promise<T> {
  signal?.throwIfAborted();
  const ZipArchive = await zipArchiveClass();
  const archive = new ZipArchive({ store: true });
  // Errors reach the caller through the sink's pipeline; this listener keeps one emitted before
  // the sink attaches (it may await first) from crashing the process, and remembers it.
  let streamError: unknown;
  archive.on('error', (err: unknown) => void (streamError ??= err));
  const fail = (err: unknown) => {
    streamError ??= err; // before later, consequential errors ("queue closed") are emitted
    // Destroy first: abort() alone ends the stream cleanly, which would store a truncated archive.
    archive.destroy(err instanceof Error ? err : new Error(String(err)));
    archive.abort();
  };
  // archiver reports a file that vanished as a 'warning' and leaves it out: an incomplete
  // archive must not be published, so it is an error here.
  archive.on('warning', fail);
  const onAbort = () => fail(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const written = sink(archive);
    feed(archive, entries, opts, () => streamError !== undefined).then(
      // Its failures also reach `written` through the stream; it may never settle once destroyed.
      () => void (streamError === undefined && archive.finalize().catch(() => undefined)),
      fail,
    );
    const result = await written.catch((err: unknown) => {
      throw streamError ?? err;
    });
    if (streamError) throw streamError;
    return result;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Hands the entries to archiver in order. Small files (rendered frames, mostly) go in as buffers
 * read a few ahead: archiver's own file entries open, stat and stream each file one after the
 * other through its queue, which cost about a millisecond per frame, longer than the frame's bytes
 * take to copy. Larger files stream from disk as before. Stops early once the archive failed.
 */
async function feed(
  archive: ZipArchive,
  entries: readonly ZipEntry[],
  opts: StreamZipOptions,
  failed: () => boolean,
): Promise<void> {
  const wholeMax = opts.wholeFileMax ?? 4 * 2 ** 20;
  const aheadMax = opts.readAheadBytes ?? 32 * 2 ** 20;
  // Bytes of each buffer handed over, in order, until archiver has written its entry.
  const handed: number[] = [];
  let held = 0;
  let wake: (() => void) | undefined;
  const woken = () => {
    wake?.();
    wake = undefined;
  };
  archive.on('entry', () => {
    held -= handed.shift() ?? 0;
    woken();
  });
  // Streams handed over and not read to the end: a failed archive leaves them, and their files, open.
  const streaming = new Set<Readable>();
  const ended = () => {
    woken();
    for (const st of streaming) st.destroy();
  };
  archive.once('close', ended);
  archive.once('error', ended);
  // A file too big to read whole streams from the handle opened here, which it then owns.
  type Loaded = { stats: Stats; bytes: Buffer } | { stats: Stats; handle: FileHandle };
  const load = async (e: ZipEntry): Promise<Loaded> => {
    const fh = await open(e.path, 'r');
    try {
      const stats = await fh.stat();
      if (!stats.isFile()) throw new Error(`not a file: ${e.path}`);
      if (stats.size > wholeMax) return { stats, handle: fh };
      const bytes = await fh.readFile();
      await fh.close();
      return { stats, bytes };
    } catch (err) {
      await fh.close().catch(() => undefined);
      throw err;
    }
  };
  const reads: (Promise<Loaded> | undefined)[] = [];
  const start = (i: number) => {
    if (i >= entries.length || reads[i]) return;
    const p = load(entries[i]!);
    // Awaited in turn below; one never awaited (the archive failed first) closes its handle.
    p.catch(() => undefined);
    reads[i] = p;
  };
  const closeUnused = () => {
    for (const p of reads) {
      void p?.then((l) => ('handle' in l ? l.handle.close() : undefined)).catch(() => undefined);
    }
  };
  try {
    for (let i = 0; i < entries.length && !failed(); i++) {
      for (let k = i; k < i + READS_AHEAD; k++) start(k);
      const loaded = await reads[i]!;
      reads[i] = undefined;
      while (held > aheadMax && !failed()) await new Promise<void>((r) => (wake = r));
      if (failed()) {
        if ('handle' in loaded) await loaded.handle.close().catch(() => undefined);
        return;
      }
      const { stats } = loaded;
      const data = { name: entries[i]!.name, date: stats.mtime, mode: stats.mode };
      // Buffers and streams both enter archiver's queue at once, in order (its file entries wait
      // for a stat first, and a later buffer would overtake them). A stream counts as filling the
      // read-ahead: nothing is added behind it until it is written, so one big file is open at a time.
      const weight = 'bytes' in loaded ? loaded.bytes.length : Math.max(stats.size, aheadMax + 1);
      if ('bytes' in loaded) archive.append(loaded.bytes, data);
      else {
        const st = loaded.handle.createReadStream();
        streaming.add(st);
        st.once('close', () => streaming.delete(st));
        archive.append(st, data);
      }
      handed.push(weight);
      held += weight;
    }
  } finally {
    closeUnused();
  }
}
