// What a project commit must satisfy before it becomes an upload. The worker lays a blob
// project out with the unpacker's rules (zip/rules.ts ProjectPlan: entry count, names, quota),
// so a commit checks the same rules and is refused now rather than failing its job later. Pure.
import type { ErrorDetail } from '../../shared/api/error-body.js';
import type { ProjectEntry } from '../../shared/api/blob-upload.js';
import { UnpackError } from '../../zip/errors.js';
import { entryPath, ProjectPlan, type UnpackLimits } from '../../zip/rules.js';

/** The sha256 of no bytes: what an empty file's entry must name (the worker checks it too). */
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** Details listed at most per refused commit: enough to fix a packer, short enough to read. */
const MAX_DETAILS = 20;

export type EntryCheck =
  | { ok: true; totalBytes: number }
  /**
   * Entries the worker would refuse: unsafe paths, two entries on one path (also after Unicode
   * normalisation or up to letter case), an empty file naming another sha256 than that of no bytes.
   */
  | { ok: false; problem: 'paths'; details: ErrorDetail[] }
  | { ok: false; problem: 'tooManyEntries'; maxEntries: number; entries: number }
  | { ok: false; problem: 'tooLarge'; maxBytes: number; bytes: number };

/** Checks a project's entries against the limits the worker will apply (`maxEntries`, `maxTotalBytes`). */
export function checkEntries(
  entries: readonly ProjectEntry[],
  limits: Pick<UnpackLimits, 'maxEntries' | 'maxTotalBytes'>,
): EntryCheck {
  if (entries.length > limits.maxEntries)
    return { ok: false, problem: 'tooManyEntries', maxEntries: limits.maxEntries, entries: entries.length };
  // Names only: the quota is checked on the total below, so one answer says by how much.
  const plan = new ProjectPlan({
    maxEntries: limits.maxEntries,
    maxTotalBytes: Number.POSITIVE_INFINITY,
    minFreeBytes: 0,
  });
  const details: ErrorDetail[] = [];
  let totalBytes = 0;
  for (let i = 0; i < entries.length; i++) {
    const { path, size, sha256 } = entries[i]!;
    totalBytes += size;
    if (details.length >= MAX_DETAILS) continue;
    if (size === 0 && sha256 !== EMPTY_SHA256) {
      details.push({
        code: 'empty_blob_sha256',
        path: ['body', 'entries', String(i), 'sha256'],
        message: `An empty file's sha256 is ${EMPTY_SHA256}.`,
      });
    }
    try {
      plan.count();
      plan.file(path, entryPath(path).segments, size);
    } catch (err) {
      if (!(err instanceof UnpackError)) throw err;
      details.push({ code: err.code, path: ['body', 'entries', String(i), 'path'], message: err.message });
    }
  }
  if (details.length > 0) return { ok: false, problem: 'paths', details };
  if (totalBytes > limits.maxTotalBytes)
    return { ok: false, problem: 'tooLarge', maxBytes: limits.maxTotalBytes, bytes: totalBytes };
  return { ok: true, totalBytes };
}
