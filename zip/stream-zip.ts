// Streams ZIP archives (archiver 8) into a consumer such as ObjectStorage.put, so an archive of
// any size is never held in memory or written to local disk first.
import type { Readable } from 'node:stream';
import { zipArchiveClass } from './archiver.js';

export interface ZipEntry {
  /** Local file to read. */
  path: string;
  /** Name inside the archive (`/`-separated, relative). */
  name: string;
}

/**
 * Writes a ZIP of `entries` into `sink` as it is produced. Entries are STORED (no compression:
 * rendered PNG/JPEG/EXR frames are already compressed, and deflating them only costs CPU).
 * A missing or unreadable file fails the archive instead of being skipped. `signal` aborts it:
 * the stream given to `sink` then errors, so a storage write never completes.
 */
export async function streamZip<T>(entries: readonly ZipEntry[], sink: (body: Readable) => Promise<T>, signal?: AbortSignal): Promise<T> {
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
    for (const e of entries) archive.file(e.path, { name: e.name });
    // Its failures also reach `written` through the stream; it may never settle once destroyed.
    archive.finalize().catch(() => undefined);
    const result = await written.catch((err: unknown) => {
      throw streamError ?? err;
    });
    if (streamError) throw streamError;
    return result;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}
