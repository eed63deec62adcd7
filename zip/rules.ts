// The rules an uploaded archive must follow before anything of it touches the disk: entry names,
// entry kinds, structure (no overlapping entries), and the limits that stop zip bombs. Bombs are
// stopped by what would really be written (a per-job quota, the entry count), never by how well
// an entry compresses: sparse caches, VDBs and uncompressed .blends deflate 1000:1 and are honest.
// Nested archives are stored as files and never unpacked, so they cannot recurse. Pure; the I/O
// lives in unpack.ts. Every refusal is an UnpackError (errors.ts) with a stable code.
import { UnpackError } from './errors.js';

export interface UnpackLimits {
  /**
   * Most entries (files and folders) in an archive; checked against the header first, then counted.
   * Default 200,000: as many as the packer's manifest may list (simulation caches of a long shot
   * hold tens of thousands of files), while a flood of empty entries still stops early.
   */
  maxEntries: number;
  /**
   * The per-job quota: most bytes one archive may expand to. Checked on the headers' sizes before
   * anything is written, and again on the real decompressed bytes while streaming. Default 64 GiB.
   */
  maxTotalBytes: number;
  /**
   * Free space the work folder's disk must keep after unpacking (the frames need room too): an
   * archive that would leave less fails retryably (the worker's disk, not the upload, is at fault). Default 1 GiB.
   */
  minFreeBytes: number;
}

export const DEFAULT_UNPACK_LIMITS: Readonly<UnpackLimits> = {
  maxEntries: 200_000,
  maxTotalBytes: 64 * 1024 ** 3,
  minFreeBytes: 1024 ** 3,
};

/** Linux limits: one name component, and a whole path. */
const MAX_SEGMENT_BYTES = 255;
const MAX_PATH_BYTES = 4000;

/**
 * Splits a relative path into safe segments, or returns a reason it is unsafe. Backslashes are
 * Windows separators and become `/` BEFORE the checks, so `..\evil` is caught as traversal.
 * `.` and empty segments are dropped.
 */
export function checkRelativePath(
  raw: string,
):
  | { ok: true; segments: string[] }
  | { ok: false; code: 'ZIP_PATH_TRAVERSAL' | 'ZIP_ABSOLUTE_PATH' | 'ZIP_BAD_NAME'; reason: string } {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(raw))
    return { ok: false, code: 'ZIP_BAD_NAME', reason: 'control characters in the name' };
  const name = raw.replace(/\\/g, '/');
  if (name.startsWith('/')) return { ok: false, code: 'ZIP_ABSOLUTE_PATH', reason: 'absolute path' };
  if (/^[a-zA-Z]:/.test(name)) return { ok: false, code: 'ZIP_ABSOLUTE_PATH', reason: 'drive letter' };
  const segments = name.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) return { ok: false, code: 'ZIP_PATH_TRAVERSAL', reason: '".." segment' };
  if (segments.some((s) => Buffer.byteLength(s) > MAX_SEGMENT_BYTES) || Buffer.byteLength(name) > MAX_PATH_BYTES) {
    return { ok: false, code: 'ZIP_BAD_NAME', reason: 'name too long' };
  }
  return { ok: true, segments };
}

/** Safe segments of an entry name, or an UnpackError. `isDir` for names ending in a separator. */
export function entryPath(raw: string): { segments: string[]; isDir: boolean } {
  const r = checkRelativePath(raw);
  if (!r.ok)
    throw new UnpackError(r.code, `The archive entry "${printable(raw)}" was refused: ${r.reason}.`, {
      entry: printable(raw),
    });
  return { segments: r.segments, isDir: /[/\\]$/.test(raw) };
}

/** A relative path in normal form (`a/b.blend`), or null when it could leave its folder. */
export function normaliseRelativePath(raw: string): string | null {
  const r = checkRelativePath(raw.trim());
  return r.ok && r.segments.length > 0 ? r.segments.join('/') : null;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const SPECIAL_TYPES = new Map([
  [0o010000, 'fifo'],
  [0o020000, 'character device'],
  [0o060000, 'block device'],
  [0o140000, 'socket'],
]);

/**
 * Refuses symlinks and device/fifo/socket entries, read from the Unix mode in the high 16 bits
 * of `externalFileAttributes` (zero, so allowed, in archives made on Windows).
 */
export function checkEntryKind(raw: string, externalFileAttributes: number): void {
  const type = (externalFileAttributes >>> 16) & S_IFMT;
  if (type === S_IFLNK)
    throw new UnpackError(
      'ZIP_SYMLINK',
      `The archive entry "${printable(raw)}" is a symbolic link; links are not allowed.`,
      { entry: printable(raw) },
    );
  const special = SPECIAL_TYPES.get(type);
  if (special)
    throw new UnpackError(
      'ZIP_SPECIAL_FILE',
      `The archive entry "${printable(raw)}" is a ${special}; only files and folders are allowed.`,
      { entry: printable(raw), kind: special },
    );
}

/** Refuses encryption and compression methods other than STORE (0) and DEFLATE (8). */
export function checkEntryEncoding(raw: string, encrypted: boolean, method: number): void {
  if (encrypted)
    throw new UnpackError(
      'ZIP_ENCRYPTED',
      `The archive entry "${printable(raw)}" is encrypted; upload an archive without a password.`,
      { entry: printable(raw) },
    );
  if (method !== 0 && method !== 8) {
    throw new UnpackError(
      'ZIP_UNSUPPORTED_METHOD',
      `The archive entry "${printable(raw)}" uses compression method ${method}; only stored and deflated ` +
        `entries are supported.`,
      { entry: printable(raw), method },
    );
  }
}

export function tooLargeError(limits: UnpackLimits, bytes: number): UnpackError {
  const gib = (limits.maxTotalBytes / 1024 ** 3).toFixed(limits.maxTotalBytes % 1024 ** 3 === 0 ? 0 : 2);
  return new UnpackError(
    'ZIP_TOO_LARGE',
    `The archive expands to more than this service's quota of ${limits.maxTotalBytes} bytes (${gib} GiB) per ` +
      `job; split the project into smaller jobs, or ask the farm's operator to raise it (renderbridge ` +
      `service|worker --unpack-quota, or RENDERBRIDGE_UNPACK_QUOTA).`,
    { maxTotalBytes: limits.maxTotalBytes, bytes },
  );
}

/** Where an entry's bytes lie in the archive: its local header, name, extra field and data. */
export interface EntryExtent {
  raw: string;
  start: number;
  end: number;
}

/**
 * Refuses entries whose extents overlap: honest writers lay entries one after another, while the
 * overlap bomb points many central-directory entries at one shared, highly compressed stream.
 */
export function checkOverlaps(extents: readonly EntryExtent[]): void {
  const sorted = [...extents].sort((a, b) => a.start - b.start);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1] as EntryExtent;
    const cur = sorted[i] as EntryExtent;
    if (cur.start < prev.end) {
      throw new UnpackError(
        'ZIP_OVERLAPPING_ENTRIES',
        `The archive entries "${printable(prev.raw)}" and "${printable(cur.raw)}" share bytes; the archive ` +
          `is malformed (or a zip bomb). Repack the project.`,
        {
          entry: printable(cur.raw),
          overlaps: printable(prev.raw),
        },
      );
    }
  }
}

/**
 * Tracks names already taken, so two entries cannot land on one path: exact duplicates, names
 * equal after Unicode NFC normalisation (macOS NFD vs NFC), a file where a folder is (or back),
 * and two files (or a file and a folder) whose names differ only in letter case. Those last
 * are distinct on Linux, but one file on the case-insensitive disks of macOS and Windows (a
 * worker there, or the artist's machine the project goes back to): the daemon's packer never
 * writes them (daemon/pack/layout.ts clashKey), so only a hand-made archive has them.
 */
export class NameRegistry {
  private readonly files = new Set<string>();
  private readonly dirs = new Set<string>();
  /** Lower-cased key -> the key it was taken under, for files and folders. */
  private readonly foldedFiles = new Map<string, string>();
  private readonly foldedDirs = new Map<string, string>();

  add(raw: string, segments: readonly string[], isDir: boolean): void {
    const keys = segments.map((_, i) =>
      segments
        .slice(0, i + 1)
        .join('/')
        .normalize('NFC'),
    );
    const own = keys[keys.length - 1] as string;
    const clash = (why: string) =>
      new UnpackError(
        'ZIP_DUPLICATE_NAME',
        `The archive entry "${printable(raw)}" clashes with another entry (${why}).`,
        { entry: printable(raw) },
      );
    const caseClash = (other: string) => clash(`"${printable(other)}" differs only in letter case; rename one of them`);
    for (const k of keys.slice(0, -1)) {
      if (this.files.has(k)) throw clash('a file has the name of its folder');
      const f = this.foldedFiles.get(k.toLowerCase());
      if (f !== undefined) throw caseClash(f);
      this.dirs.add(k);
      this.foldedDirs.set(k.toLowerCase(), k);
    }
    const folded = own.toLowerCase();
    if (isDir) {
      if (this.files.has(own)) throw clash('a file has the same name');
      const f = this.foldedFiles.get(folded);
      if (f !== undefined) throw caseClash(f);
      this.dirs.add(own);
      this.foldedDirs.set(folded, own);
      return;
    }
    if (this.files.has(own)) throw clash('same name, possibly after Unicode normalisation');
    if (this.dirs.has(own)) throw clash('a folder has the same name');
    const other = this.foldedFiles.get(folded) ?? this.foldedDirs.get(folded);
    if (other !== undefined) throw caseClash(other);
    this.files.add(own);
    this.foldedFiles.set(folded, own);
  }
}

export function tooManyEntries(limits: UnpackLimits, count: number): UnpackError {
  return new UnpackError('ZIP_TOO_MANY_ENTRIES', `The archive has more than ${limits.maxEntries} entries.`, {
    maxEntries: limits.maxEntries,
    entries: count,
  });
}

/**
 * The checks every entry of a project passes before anything is written, whatever the project
 * came as (a zip's central directory, or a blob project's file list): the entry count, each
 * name against the names taken, and the sizes declared so far against the per-job quota. The
 * caller checks the name itself first (entryPath) and its own format's rules in between.
 */
export class ProjectPlan {
  private readonly names = new NameRegistry();
  private entries = 0;
  /** Sum of the files' declared sizes. */
  declaredBytes = 0;

  constructor(readonly limits: UnpackLimits) {}

  /** Counts one more entry; the first thing looked at, so a huge list stops early. */
  count(): void {
    if (++this.entries > this.limits.maxEntries) throw tooManyEntries(this.limits, this.entries);
  }

  /** A file of `size` bytes at `segments` (from entryPath; none is refused: a file needs a name). */
  file(raw: string, segments: readonly string[], size: number): void {
    if (segments.length === 0)
      throw new UnpackError('ZIP_BAD_NAME', `The archive entry "${printable(raw)}" has no name.`, {
        entry: printable(raw),
      });
    this.declaredBytes += size;
    if (this.declaredBytes > this.limits.maxTotalBytes) throw tooLargeError(this.limits, this.declaredBytes);
    this.names.add(raw, segments, false);
  }

  dir(raw: string, segments: readonly string[]): void {
    this.names.add(raw, segments, true);
  }
}

/** Names as shown in messages: control characters escaped, length capped. */
export function printable(raw: string): string {
  // eslint-disable-next-line no-control-regex
  const s = raw.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return s.length > 300 ? `${s.slice(0, 300)}...` : s;
}
