// Object keys of a job's published outputs. Output file names come from the scene (any
// characters); keys accept only a safe alphabet (see fs-storage isValidKey), so names are
// mapped to safe segments while the original names stay in OutputFile.fileName/relativePath.
import path from 'node:path';
import { safeSegment } from '../../shared/safe-segment.js';

/** Every output object of a job lives under this prefix (retention deletes it as one). */
export function jobOutputPrefix(workspaceId: string, jobId: string): string {
  return `outputs/${workspaceId}/${jobId}`;
}

/** Keys have at most 16 segments; the prefix and a folder take 4. */
const MAX_REL_SEGMENTS = 12;

/**
 * A relative path from the scene (a compositor output's folder/file), made safe to use as a ZIP
 * entry name: `/`-separated, no empty, `.` or `..` parts, never absolute.
 */
export function safeRelativePath(rel: string): string {
  const parts = rel
    .replace(/\\/g, '/')
    .split('/')
    .filter((p) => p !== '' && p !== '.' && p !== '..');
  if (parts.length === 0) throw new Error(`empty relative path: ${JSON.stringify(rel)}`);
  return parts.join('/');
}

/** Key segments for a relative path; deeper paths are folded into their last segment. */
export function relativeKey(rel: string): string {
  const parts = safeRelativePath(rel).split('/');
  if (parts.length > MAX_REL_SEGMENTS)
    parts.splice(MAX_REL_SEGMENTS - 1, Infinity, parts.slice(MAX_REL_SEGMENTS - 1).join('_'));
  return parts.map(safeSegment).join('/');
}

/** Returns `want`, or `want` with -2, -3, ... before the extension when already taken. */
export function uniqueName(want: string, taken: Set<string>): string {
  let name = want;
  const ext = path.posix.extname(want);
  for (let i = 2; taken.has(name.toLowerCase()); i++) name = `${want.slice(0, want.length - ext.length)}-${i}${ext}`;
  taken.add(name.toLowerCase());
  return name;
}
