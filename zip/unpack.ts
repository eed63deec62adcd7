// Unpacks an uploaded source into the job's own folder, safely. A .blend is copied as is; a .zip
// is read with yauzl in two passes: the whole central directory first (names, kinds, entry count,
// overlapping entries, the quota and free disk space on the headers' sizes), then each entry's
// data, its real decompressed bytes counted against the quota again while streaming (yauzl
// stops an entry at its header's size). The per-entry rules (rules.ts ProjectPlan) and the
// folder it all goes to (project-folder.ts) are those the worker's blob projects use too.
import { constants as fsc } from 'node:fs';
import { copyFile, open } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import yauzl from 'yauzl';
import { nextEntry } from './entries.js';
import { decodeEntryName } from './entry-name.js';
import { UnpackAbortedError, UnpackError } from './errors.js';
import { ensureFreeSpace, intoProjectFolder, prepareEntryPath, type UnpackResult } from './project-folder.js';
import {
  checkEntryEncoding,
  checkEntryKind,
  checkOverlaps,
  DEFAULT_UNPACK_LIMITS,
  entryPath,
  printable,
  ProjectPlan,
  tooLargeError,
  tooManyEntries,
  type EntryExtent,
  type UnpackLimits,
} from './rules.js';

export interface UnpackOptions {
  /** Local path of the uploaded file. Remote storage: download it into the job folder first. */
  source: string;
  fileType: 'blend' | 'zip';
  /** The job's own folder (created when missing). Nothing is written outside it. */
  jobDir: string;
  /** Folder inside `jobDir` receiving the project; replaced when it exists (a retried task). Default `project`. */
  destName?: string;
  /** Name for a bare .blend: the upload's file name. Default `scene.blend`. */
  fileName?: string;
  /** Zip limits; each one missing takes its DEFAULT_UNPACK_LIMITS value. */
  limits?: Partial<UnpackLimits>;
  /** Stops between entries and mid-entry; rejects with UnpackAbortedError (carrying the signal's reason). */
  signal?: AbortSignal;
}

/**
 * Unpacks `source` into `jobDir/destName`. Refusals throw UnpackError, too little disk
 * DiskSpaceError, an abort UnpackAbortedError; I/O failures throw as they are (errors.ts).
 */
export async function unpackSource(opts: UnpackOptions): Promise<UnpackResult> {
  return intoProjectFolder(opts, (tmp) =>
    opts.fileType === 'blend'
      ? copyBlend(opts.source, tmp, opts.fileName)
      : extractZip(opts.source, tmp, { ...DEFAULT_UNPACK_LIMITS, ...opts.limits }, opts.signal),
  );
}

async function copyBlend(source: string, tmp: string, fileName?: string): Promise<{ files: string[]; bytes: number }> {
  const name = basename((fileName ?? 'scene.blend').replace(/\\/g, '/'));
  // eslint-disable-next-line no-control-regex
  if (!name.toLowerCase().endsWith('.blend') || /[\u0000-\u001f\u007f]/.test(name) || name.startsWith('.')) {
    throw new UnpackError('SOURCE_BAD_NAME', `"${printable(name)}" is not a usable .blend file name.`, {
      fileName: printable(name),
    });
  }
  // A reflink where the filesystem has them, a plain copy otherwise; never a hard link, so
  // nothing done to the job's copy can reach the stored upload.
  await copyFile(source, join(tmp, name), fsc.COPYFILE_FICLONE);
  const fh = await open(join(tmp, name), 'r');
  try {
    return { files: [name], bytes: (await fh.stat()).size };
  } finally {
    await fh.close();
  }
}

/** An entry that passed the central-directory checks, with its safe path. */
interface Planned {
  entry: yauzl.Entry;
  raw: string;
  segments: string[];
  isDir: boolean;
}

async function extractZip(
  source: string,
  tmp: string,
  limits: UnpackLimits,
  signal?: AbortSignal,
): Promise<{ files: string[]; bytes: number }> {
  let zip: yauzl.ZipFile;
  try {
    // decodeStrings off: names are decoded and checked here, so each refusal gets its own code.
    zip = await yauzl.openPromise(source, {
      lazyEntries: true,
      autoClose: false,
      decodeStrings: false,
      validateEntrySizes: true,
    });
  } catch (err) {
    throw asZipError(err);
  }
  const pending: { error: Error | null } = { error: null };
  zip.on('error', (err: Error) => (pending.error = err));
  try {
    const planned = await planEntries(zip, pending, limits);
    await checkFreeSpace(tmp, planned, limits);
    const state = { bytes: 0, files: [] as string[] };
    for (const p of planned) {
      if (signal?.aborted) throw new UnpackAbortedError(signal.reason);
      await extractEntry(zip, p, tmp, limits, state, signal);
    }
    return { files: state.files.sort(), bytes: state.bytes };
  } finally {
    zip.close();
  }
}

/**
 * First pass, before a byte is written: every central-directory entry's name, kind and method;
 * the entry count; the headers' sizes against the quota; and the entries' extents (read from
 * their local headers) for overlaps.
 */
async function planEntries(
  zip: yauzl.ZipFile,
  pending: { error: Error | null },
  limits: UnpackLimits,
): Promise<Planned[]> {
  if (zip.entryCount > limits.maxEntries) throw tooManyEntries(limits, zip.entryCount);
  const planned: Planned[] = [];
  const plan = new ProjectPlan(limits);
  for (;;) {
    let entry: yauzl.Entry | null;
    try {
      entry = await nextEntry(zip, pending);
    } catch (err) {
      throw asZipError(err);
    }
    if (!entry) break;
    plan.count();
    const raw = decodeEntryName(entry);
    const { segments, isDir } = entryPath(raw);
    checkEntryKind(raw, entry.externalFileAttributes);
    if (isDir && segments.length === 0) continue; // "./": the root itself
    if (isDir) plan.dir(raw, segments);
    else {
      checkEntryEncoding(raw, entry.isEncrypted(), entry.compressionMethod);
      plan.file(raw, segments, entry.uncompressedSize);
    }
    planned.push({ entry, raw, segments, isDir });
  }
  const extents: EntryExtent[] = [];
  for (const p of planned) {
    let dataStart: number;
    try {
      dataStart = (await zip.readLocalFileHeaderPromise(p.entry, { minimal: true })).fileDataStart;
    } catch (err) {
      throw asZipError(err);
    }
    extents.push({ raw: p.raw, start: p.entry.relativeOffsetOfLocalHeader, end: dataStart + p.entry.compressedSize });
  }
  checkOverlaps(extents);
  return planned;
}

/**
 * The headers' sizes bound what will be written (yauzl stops an entry at its declared size), so the
 * disk is checked once, up front.
 */
async function checkFreeSpace(tmp: string, planned: readonly Planned[], limits: UnpackLimits): Promise<void> {
  await ensureFreeSpace(
    tmp,
    planned.reduce((sum, p) => sum + (p.isDir ? 0 : p.entry.uncompressedSize), 0),
    limits,
  );
}

async function extractEntry(
  zip: yauzl.ZipFile,
  p: Planned,
  tmp: string,
  limits: UnpackLimits,
  state: { bytes: number; files: string[] },
  signal?: AbortSignal,
): Promise<void> {
  const { entry, raw, segments, isDir } = p;
  // macOS resource forks: never useful to Blender, not written (their names were still checked).
  if (segments[0] === '__MACOSX') return;
  const target = await prepareEntryPath(tmp, segments, isDir, raw);
  if (isDir) return;
  // O_EXCL | O_NOFOLLOW: never overwrite, never write through a link. Opened before the entry's
  // stream: yauzl's size check can fail on the first chunk, and nothing may sit between opening
  // that stream and the pipeline that listens for its errors.
  const fh = await open(target, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, 0o644);
  let written = 0;
  let crc = 0;
  const guard = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      written += chunk.length;
      state.bytes += chunk.length;
      // The quota on the real bytes, before the chunk reaches the disk.
      if (state.bytes > limits.maxTotalBytes) return cb(tooLargeError(limits, state.bytes));
      crc = crc32(chunk, crc);
      cb(null, chunk);
    },
  });
  try {
    const input = await zip.openReadStreamPromise(entry);
    await pipeline(input, guard, fh.createWriteStream(), signal ? { signal } : {});
  } catch (err) {
    if (signal?.aborted) throw new UnpackAbortedError(signal.reason);
    throw asZipError(err);
  } finally {
    await fh.close().catch(() => undefined);
  }
  if (written !== entry.uncompressedSize || crc !== entry.crc32) {
    throw new UnpackError(
      'ZIP_CORRUPT',
      `The archive entry "${printable(raw)}" is damaged (size or checksum does not match).`,
      { entry: printable(raw) },
    );
  }
  state.files.push(segments.join('/'));
}

/**
 * Errors from yauzl and zlib mean a bad archive (fatal); errors from the filesystem (they carry
 * `syscall`: ENOSPC, EIO...) are passed on as they are: the machine, not the archive, failed.
 */
function asZipError(err: unknown): Error {
  if (err instanceof UnpackError || err instanceof UnpackAbortedError) return err;
  if (err instanceof Error && 'syscall' in err) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/too many bytes|not enough bytes|size mismatch/i.test(message)) {
    return new UnpackError(
      'ZIP_SIZE_MISMATCH',
      'An archive entry holds a different amount of data than its header says.',
      { reason: message },
      { cause: err },
    );
  }
  if (/encrypt/i.test(message))
    return new UnpackError(
      'ZIP_ENCRYPTED',
      'The archive uses encryption; upload it without a password.',
      { reason: message },
      { cause: err },
    );
  return new UnpackError(
    'ZIP_CORRUPT',
    'The upload is not a readable ZIP archive.',
    { reason: message },
    { cause: err },
  );
}
