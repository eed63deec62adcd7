// Unpacks an uploaded source into the job's own folder, safely. A .blend is copied as is; a .zip
// is read with yauzl entry by entry (lazyEntries) and every entry is checked (unpack-rules.ts)
// before a byte of it is written. Sizes are counted on the real decompressed bytes, never taken
// from headers. Everything goes to a temporary folder inside the job folder, renamed into place
// only when the whole archive passed; on any failure the temporary folder is removed.
import { constants as fsc } from 'node:fs';
import { copyFile, mkdir, mkdtemp, open, readFile, realpath, rename, rm } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import yauzl from 'yauzl';
import { CanceledTaskError } from './outcomes.js';
import { MAX_MANIFEST_BYTES, PACK_MANIFEST_NAME, parseManifest, type PackManifest } from './project-files.js';
import {
  checkEntryEncoding,
  checkEntryKind,
  DEFAULT_UNPACK_LIMITS,
  entryPath,
  NameRegistry,
  printable,
  ratioError,
  ratioExceeded,
  tooLargeError,
  UnpackError,
  type UnpackLimits,
} from './unpack-rules.js';
import { nextEntry } from './zip-entries.js';

export { UnpackError, DEFAULT_UNPACK_LIMITS, type UnpackErrorCode, type UnpackLimits } from './unpack-rules.js';
export { pickSceneFile, resolveBundledAddons, PACK_MANIFEST_NAME, type PackManifest, type ResolvedAddon } from './project-files.js';

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
  /** Stops between entries and mid-entry; rejects with CanceledTaskError. */
  signal?: AbortSignal;
}

export interface UnpackResult {
  /** Real absolute path of the project folder (inside the job folder). */
  root: string;
  /** Files written, `/`-separated relative to `root`, sorted (folders not listed). */
  files: string[];
  /** Bytes written. */
  bytes: number;
  /** The packer's manifest when the archive has one at its root, else null. */
  manifest: PackManifest | null;
}

/** Unpacks `source` into `jobDir/destName`. Refusals throw UnpackError; I/O failures throw as they are (retryable). */
export async function unpackSource(opts: UnpackOptions): Promise<UnpackResult> {
  await mkdir(opts.jobDir, { recursive: true });
  const jobDir = await realpath(opts.jobDir);
  const destName = opts.destName ?? 'project';
  if (!/^[\w.-]+$/.test(destName) || destName === '.' || destName === '..') throw new Error(`bad destName "${destName}"`);
  const tmp = await mkdtemp(join(jobDir, '.unpack-'));
  try {
    const result =
      opts.fileType === 'blend'
        ? await copyBlend(opts.source, tmp, opts.fileName)
        : await extractZip(opts.source, tmp, { ...DEFAULT_UNPACK_LIMITS, ...opts.limits }, opts.signal);
    const manifest = result.files.includes(PACK_MANIFEST_NAME) ? await readManifest(join(tmp, PACK_MANIFEST_NAME)) : null;
    const dest = join(jobDir, destName);
    await rm(dest, { recursive: true, force: true });
    await rename(tmp, dest);
    return { root: dest, files: result.files, bytes: result.bytes, manifest };
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

async function copyBlend(source: string, tmp: string, fileName?: string): Promise<{ files: string[]; bytes: number }> {
  const name = basename((fileName ?? 'scene.blend').replace(/\\/g, '/'));
  // eslint-disable-next-line no-control-regex
  if (!name.toLowerCase().endsWith('.blend') || /[\u0000-\u001f\u007f]/.test(name) || name.startsWith('.')) {
    throw new UnpackError('SOURCE_BAD_NAME', `"${printable(name)}" is not a usable .blend file name.`, { fileName: printable(name) });
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

async function readManifest(file: string): Promise<PackManifest> {
  const text = await readFile(file);
  if (text.length > MAX_MANIFEST_BYTES) throw new UnpackError('ZIP_BAD_MANIFEST', `${PACK_MANIFEST_NAME} is larger than ${MAX_MANIFEST_BYTES} bytes.`);
  return parseManifest(text.toString('utf8'));
}


async function extractZip(source: string, tmp: string, limits: UnpackLimits, signal?: AbortSignal): Promise<{ files: string[]; bytes: number }> {
  let zip: yauzl.ZipFile;
  try {
    // decodeStrings off: names are decoded and checked here, so each refusal gets its own code.
    zip = await yauzl.openPromise(source, { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true });
  } catch (err) {
    throw asZipError(err);
  }
  const pending: { error: Error | null } = { error: null };
  zip.on('error', (err: Error) => (pending.error = err));
  const state = { bytes: 0, declared: 0, entries: 0, files: [] as string[] };
  const names = new NameRegistry();
  try {
    if (zip.entryCount > limits.maxEntries) throw tooMany(limits, zip.entryCount);
    for (;;) {
      if (signal?.aborted) throw new CanceledTaskError();
      let entry: yauzl.Entry | null;
      try {
        entry = await nextEntry(zip, pending);
      } catch (err) {
        throw asZipError(err);
      }
      if (!entry) break;
      if (++state.entries > limits.maxEntries) throw tooMany(limits, state.entries);
      await extractEntry(zip, entry, tmp, limits, state, names, signal);
    }
    return { files: state.files.sort(), bytes: state.bytes };
  } finally {
    zip.close();
  }
}

async function extractEntry(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  tmp: string,
  limits: UnpackLimits,
  state: { bytes: number; declared: number; files: string[] },
  names: NameRegistry,
  signal?: AbortSignal,
): Promise<void> {
  const raw = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
  const { segments, isDir } = entryPath(raw);
  checkEntryKind(raw, entry.externalFileAttributes);
  if (isDir && segments.length === 0) return; // "./": the root itself
  if (segments.length === 0) throw new UnpackError('ZIP_BAD_NAME', `The archive entry "${printable(raw)}" has no name.`, { entry: printable(raw) });
  if (!isDir) {
    checkEntryEncoding(raw, entry.isEncrypted(), entry.compressionMethod);
    // Cheap early refusals from the headers; the real bytes are counted below either way.
    state.declared += entry.uncompressedSize;
    if (state.declared > limits.maxTotalBytes) throw tooLargeError(limits, state.declared);
    if (ratioExceeded(entry.uncompressedSize, entry.compressedSize, limits)) throw ratioError(raw, entry.uncompressedSize, entry.compressedSize, limits);
  }
  names.add(raw, segments, isDir);
  // macOS resource forks: never useful to Blender, not written (their names were still checked).
  if (segments[0] === '__MACOSX') return;
  const target = join(tmp, ...segments);
  const parent = join(tmp, ...(isDir ? segments : segments.slice(0, -1)));
  await mkdir(parent, { recursive: true, mode: 0o755 });
  await assertInside(tmp, parent, raw);
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
      if (state.bytes > limits.maxTotalBytes) return cb(tooLargeError(limits, state.bytes));
      if (ratioExceeded(written, entry.compressedSize, limits)) return cb(ratioError(raw, written, entry.compressedSize, limits));
      crc = crc32(chunk, crc);
      cb(null, chunk);
    },
  });
  try {
    const input = await zip.openReadStreamPromise(entry);
    await pipeline(input, guard, fh.createWriteStream(), signal ? { signal } : {});
  } catch (err) {
    if (signal?.aborted) throw new CanceledTaskError();
    throw asZipError(err);
  } finally {
    await fh.close().catch(() => undefined);
  }
  if (written !== entry.uncompressedSize || crc !== entry.crc32) {
    throw new UnpackError('ZIP_CORRUPT', `The archive entry "${printable(raw)}" is damaged (size or checksum does not match).`, { entry: printable(raw) });
  }
  state.files.push(segments.join('/'));
}

/** Defence in depth: the folder we are about to write in really is inside the temporary folder. */
async function assertInside(root: string, dir: string, raw: string): Promise<void> {
  const real = await realpath(dir);
  const rel = relative(root, real);
  if (rel === '..' || rel.startsWith(`..${sep}`) || rel.startsWith(sep)) {
    throw new UnpackError('ZIP_PATH_TRAVERSAL', `The archive entry "${printable(raw)}" would be written outside the job folder.`, { entry: printable(raw) });
  }
}

function tooMany(limits: UnpackLimits, count: number): UnpackError {
  return new UnpackError('ZIP_TOO_MANY_ENTRIES', `The archive has more than ${limits.maxEntries} entries.`, { maxEntries: limits.maxEntries, entries: count });
}

/**
 * Errors from yauzl and zlib mean a bad archive (fatal); errors from the filesystem (they carry
 * `syscall`: ENOSPC, EIO...) are passed on as they are, so the task can be retried.
 */
function asZipError(err: unknown): Error {
  if (err instanceof UnpackError || err instanceof CanceledTaskError) return err;
  if (err instanceof Error && 'syscall' in err) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/too many bytes|not enough bytes|size mismatch/i.test(message)) {
    return new UnpackError('ZIP_SIZE_MISMATCH', 'An archive entry holds a different amount of data than its header says.', { reason: message }, { cause: err });
  }
  if (/encrypt/i.test(message)) return new UnpackError('ZIP_ENCRYPTED', 'The archive uses encryption; upload it without a password.', { reason: message }, { cause: err });
  return new UnpackError('ZIP_CORRUPT', 'The upload is not a readable ZIP archive.', { reason: message }, { cause: err });
}
