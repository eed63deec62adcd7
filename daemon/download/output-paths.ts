// Where a downloaded output may be written. Names come from the server, so they are untrusted:
// `safeRelativePath` turns one into a relative path that is valid on Linux, macOS and Windows or
// refuses it, and `prepareOutputPath` creates its folders inside the job's folder without ever
// following a symlink out of it.
import { lstat, mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';

export type SafePath = { ok: true; relative: string } | { ok: false; reason: string };

/** Device names Windows reserves whatever the extension (`CON`, `nul.txt`, `COM1.png`, ...). */
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[1-9¹²³]|lpt[1-9¹²³]|conin\$|conout\$)(\..*)?$/i;
/** Characters Windows refuses in names, and every control character. */
// eslint-disable-next-line no-control-regex
const BAD_CHARS = /[<>:"|?*\u0000-\u001f\u007f]/g;
/** Longest name of one path segment on common file systems, in UTF-8 bytes. */
const MAX_SEGMENT_BYTES = 255;

/**
 * The server's name (`relativePath` or `fileName`) as a relative path with `/` separators, or a
 * refusal. Refused: absolute paths (`/x`, `\\server\x`), drive letters (`C:x`), any `..` segment,
 * a segment longer than 255 bytes, and names left empty. Sanitised: backslashes are separators,
 * empty and `.` segments are dropped, control characters and `<>:"|?*` become `_`, trailing dots
 * and spaces become `_`, and Windows device names (`CON`, `aux.png`) get a leading `_`.
 */
export function safeRelativePath(name: string): SafePath {
  const unified = name.replace(/\\/g, '/');
  if (unified.startsWith('/')) return { ok: false, reason: 'absolute path' };
  if (/^[a-zA-Z]:/.test(unified)) return { ok: false, reason: 'drive letter' };
  const segments = unified.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.some((s) => s === '..')) return { ok: false, reason: '".." segment' };
  const cleaned: string[] = [];
  for (const raw of segments) {
    let s = raw.replace(BAD_CHARS, '_');
    s = s.replace(/[. ]+$/, (tail) => '_'.repeat(tail.length));
    if (WINDOWS_RESERVED.test(s)) s = `_${s}`;
    if (Buffer.byteLength(s) > MAX_SEGMENT_BYTES)
      return { ok: false, reason: `a name longer than ${MAX_SEGMENT_BYTES} bytes` };
    cleaned.push(s);
  }
  if (cleaned.length === 0) return { ok: false, reason: 'empty name' };
  return { ok: true, relative: cleaned.join('/') };
}

/** A path inside outDir was refused (a symlink or a file in the way, or the result lies outside). */
export class UnsafeOutputPathError extends Error {
  override readonly name = 'UnsafeOutputPathError';
}

/**
 * Creates `outDir` and the folders of `relative` (from `safeRelativePath`) one level at a time,
 * refusing any existing level that is a symlink or not a folder, and returns the absolute target
 * path. The target itself may exist only as a regular file. Checks at the end that the real path of
 * the parent folder lies inside the real path of outDir.
 */
export async function prepareOutputPath(outDir: string, relative: string): Promise<string> {
  const root = path.resolve(outDir);
  await mkdir(root, { recursive: true });
  const realRoot = await realpath(root);
  const segments = relative.split('/');
  const fileName = segments.pop();
  if (!fileName) throw new UnsafeOutputPathError(`empty output name`);
  let dir = root;
  for (const segment of segments) {
    dir = path.join(dir, segment);
    const info = await lstat(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (info === null)
      await mkdir(dir).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
    else if (info.isSymbolicLink())
      throw new UnsafeOutputPathError(`${path.relative(root, dir)} is a symlink: refusing to write through it`);
    else if (!info.isDirectory())
      throw new UnsafeOutputPathError(`${path.relative(root, dir)} exists and is not a folder`);
  }
  const realDir = await realpath(dir);
  if (realDir !== realRoot && !realDir.startsWith(realRoot + path.sep)) {
    throw new UnsafeOutputPathError(`${relative} resolves outside the output folder`);
  }
  const target = path.join(realDir, fileName);
  const existing = await lstat(target).catch(() => null);
  if (existing && !existing.isFile()) throw new UnsafeOutputPathError(`${relative} exists and is not a regular file`);
  return target;
}

/**
 * Picks a distinct relative path when two server names sanitise to the same one (`a?.png` and
 * `a*.png`): the second becomes `a_-2.png`. Comparison ignores case, as on Windows and macOS.
 */
export function uniquePath(relative: string, taken: Set<string>): string {
  let candidate = relative;
  const ext = path.posix.extname(relative);
  const stem = relative.slice(0, relative.length - ext.length);
  for (let n = 2; taken.has(candidate.toLowerCase()); n++) candidate = `${stem}-${n}${ext}`;
  taken.add(candidate.toLowerCase());
  return candidate;
}
