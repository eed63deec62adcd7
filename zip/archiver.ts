// The one place archiver (8) is loaded, for the worker's streamZip and the daemon's zip writer.
// archiver ships no type declarations: the interface below is the part of its ZipArchive we use.
import type { Readable } from 'node:stream';

/** archiver 8's ZipArchive, the part used here: a Readable of the archive's bytes. */
export interface ZipArchive extends Readable {
  /** Adds a file read from disk (archiver opens it when the entry's turn comes). */
  file(filepath: string, data: { name: string }): this;
  /** Adds an entry from a buffer or a stream; `store` skips compression. */
  append(source: Buffer | Readable, data: { name: string; store?: boolean; date?: Date; mode?: number }): this;
  finalize(): Promise<void>;
  abort(): this;
  /** Bytes of archive produced so far. */
  pointer(): number;
}

export interface ZipArchiveOptions {
  /** Every entry stored, none deflated. */
  store?: boolean;
  forceZip64?: boolean;
  zlib?: { level: number; chunkSize?: number };
  highWaterMark?: number;
}

export type ZipArchiveClass = new (options: ZipArchiveOptions) => ZipArchive;

// A specifier held in a variable keeps the compiler from looking for declarations archiver lacks,
// without an ambient `declare module` that another module could declare a second time.
const ARCHIVER: string = 'archiver';

/** archiver's ZipArchive class, loaded on first use (only the code paths that write zips pay for it). */
export async function zipArchiveClass(): Promise<ZipArchiveClass> {
  const mod = (await import(ARCHIVER)) as { ZipArchive?: ZipArchiveClass };
  if (typeof mod.ZipArchive !== 'function') throw new Error('archiver >= 8 is required (named export ZipArchive)');
  return mod.ZipArchive;
}
