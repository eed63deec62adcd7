// A job's project assembled from blobs (the content-addressed upload extension) instead of
// unpacked from a zip, under the zip's rules exactly: each path is checked and named as a zip
// entry would be (zip/rules.ts: traversal, absolute paths, bad names, duplicates and names
// differing only in case, the entry count, the per-job quota on the bytes), into the same
// temporary folder renamed into place (zip/project-folder.ts), with free disk kept and the
// packer's manifest read; refusals are the same UnpackError codes. Files come from this
// worker's blob cache: hard links when the cache is on the job's disk, else copies.
import { constants as fsc } from 'node:fs';
import { chmod, copyFile, link, mkdir, open, stat } from 'node:fs/promises';
import { z } from 'zod';
import { BlobRef } from '../../../shared/api/blob-upload.js';
import { blobKey } from '../../domain/blob-project.js';
import { UnpackAbortedError, UnpackError } from '../../../zip/errors.js';
import {
  ensureFreeSpace,
  intoProjectFolder,
  prepareEntryPath,
  type UnpackResult,
} from '../../../zip/project-folder.js';
import {
  DEFAULT_UNPACK_LIMITS,
  entryPath,
  printable,
  ProjectPlan,
  tooManyEntries,
  type UnpackLimits,
} from '../../../zip/rules.js';
import { BlobIntegrityError } from './blob-integrity.js';
import type { BlobCache, BlobFetchReport, BlobSource } from './blob-cache.js';

export interface AssembleOptions {
  storage: BlobSource;
  /** Object key of the project document (a BlobProject, service/domain/blob-project.ts). */
  projectKey: string;
  /** The job's workspace: its blobs are the only ones the project can name. */
  workspaceId: string;
  /** The job's folder; the project goes to `jobDir/project`. */
  jobDir: string;
  cache: BlobCache;
  /** Each one missing takes its DEFAULT_UNPACK_LIMITS value. */
  limits?: Partial<UnpackLimits>;
  signal: AbortSignal;
}

/** Most bytes of a project document: 200,000 entries (the extension's most) with long paths. */
export const MAX_BLOB_PROJECT_BYTES = 64 * 1024 ** 2;

/**
 * The stored document, with its paths as plain strings: the service checked them when the
 * project was committed, and the worker checks them again with the zip's rules, so that a path
 * that is wrong here is refused with the code a zip entry would get (not a parse error).
 */
const StoredProject = z.object({
  version: z.literal(1),
  entries: z.array(BlobRef.extend({ path: z.string().max(16_384) })),
});

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

interface Planned {
  raw: string;
  segments: string[];
  blob: BlobRef;
}

/**
 * Assembles the project into `jobDir/project`. Throws UnpackError for refusals, DiskSpaceError
 * for too little disk, BlobIntegrityError for a damaged blob, UnpackAbortedError on abort.
 */
export async function assembleBlobProject(o: AssembleOptions): Promise<UnpackResult & { blobCache: BlobFetchReport }> {
  const limits = { ...DEFAULT_UNPACK_LIMITS, ...o.limits };
  const planned = planEntries(await readBlobProject(o.storage, o.projectKey), limits);
  const distinct = [
    ...new Map(planned.filter((p) => p.blob.size > 0).map((p) => [`${p.blob.sha256}-${p.blob.size}`, p.blob])).values(),
  ];
  const { held, missing } = await o.cache.lookup(distinct);
  try {
    const report: BlobFetchReport = { hits: held.length, misses: missing.length, bytesFetched: 0 };
    const missingBytes = missing.reduce((sum, b) => sum + b.size, 0);
    await o.cache.makeRoom(missingBytes);
    await mkdir(o.jobDir, { recursive: true });
    const sameDisk = (await stat(o.cache.dir)).dev === (await stat(o.jobDir)).dev;
    if (sameDisk) await ensureFreeSpace(o.jobDir, missingBytes, limits);
    else {
      await ensureFreeSpace(o.cache.dir, missingBytes, limits);
      await ensureFreeSpace(
        o.jobDir,
        planned.reduce((sum, p) => sum + p.blob.size, 0),
        limits,
      );
    }
    const keyOf = (b: BlobRef) => blobKey(o.workspaceId, b);
    report.bytesFetched = await o.cache.fetch(o.storage, keyOf, missing, o.signal);
    const place = new Placer(o, keyOf, sameDisk, report);
    const result = await intoProjectFolder({ jobDir: o.jobDir }, async (tmp) => {
      const files: string[] = [];
      let bytes = 0;
      for (const p of planned) {
        if (o.signal.aborted) throw new UnpackAbortedError(o.signal.reason);
        const target = await prepareEntryPath(tmp, p.segments, false, p.raw);
        await place.file(p.blob, target);
        files.push(p.segments.join('/'));
        bytes += p.blob.size;
      }
      return { files: files.sort(), bytes };
    });
    return { ...result, blobCache: report };
  } finally {
    o.cache.release(distinct);
    // Over its cap after this prepare's downloads: trimmed now that they are unpinned. A trim
    // that fails leaves the cache over its cap until the next prepare; the project is fine.
    await o.cache.makeRoom().catch(() => undefined);
  }
}

/** Reads and parses the project document, refusing one over MAX_BLOB_PROJECT_BYTES unread. */
async function readBlobProject(storage: BlobSource, key: string): Promise<z.infer<typeof StoredProject>> {
  const stream = await storage.get(key);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BLOB_PROJECT_BYTES) {
      stream.destroy();
      throw new UnpackError('ZIP_CORRUPT', `The project's file list is larger than ${MAX_BLOB_PROJECT_BYTES} bytes.`, {
        maxBytes: MAX_BLOB_PROJECT_BYTES,
      });
    }
    chunks.push(chunk);
  }
  let json: unknown;
  try {
    json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new UnpackError('ZIP_CORRUPT', "The project's file list is not valid JSON; upload the project again.");
  }
  const r = StoredProject.safeParse(json);
  if (!r.success) {
    throw new UnpackError(
      'ZIP_CORRUPT',
      "The project's file list does not have the expected shape; upload the project again.",
      {
        issues: r.error.issues.slice(0, 20).map((i) => `${i.path.join('.')}: ${i.message}`),
      },
    );
  }
  return r.data;
}

/** Every entry through the zip's rules, in the zip's order of checks, before anything is written. */
function planEntries(project: z.infer<typeof StoredProject>, limits: UnpackLimits): Planned[] {
  if (project.entries.length > limits.maxEntries) throw tooManyEntries(limits, project.entries.length);
  const plan = new ProjectPlan(limits);
  const planned: Planned[] = [];
  for (const e of project.entries) {
    plan.count();
    const { segments, isDir } = entryPath(e.path);
    if (isDir)
      throw new UnpackError(
        'ZIP_BAD_NAME',
        `The project entry "${printable(e.path)}" names a folder; a project lists files only.`,
        { entry: printable(e.path) },
      );
    plan.file(e.path, segments, e.size);
    // macOS resource forks: checked like the rest, never written (as a zip's).
    if (segments[0] === '__MACOSX') continue;
    planned.push({ raw: e.path, segments, blob: { sha256: e.sha256, size: e.size } });
  }
  return planned;
}

/** Puts each file in place: a hard link to the cached blob, or a copy where links do not work. */
class Placer {
  constructor(
    private readonly o: AssembleOptions,
    private readonly keyOf: (b: BlobRef) => string,
    private linkable: boolean,
    private readonly report: BlobFetchReport,
  ) {}

  async file(blob: BlobRef, target: string): Promise<void> {
    if (blob.size === 0) {
      // Empty blobs are never stored (nothing to send): the file is made here.
      if (blob.sha256 !== EMPTY_SHA256) throw new BlobIntegrityError(blob, { sha256: EMPTY_SHA256, size: 0 });
      await (await open(target, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, 0o644)).close();
      return;
    }
    for (let refetched = false; ;) {
      const source = this.o.cache.pathOf(blob);
      try {
        if (this.linkable) return await link(source, target);
        // A reflink where the filesystem has them; writable like a zip's files (the cache's are 0444).
        await copyFile(source, target, fsc.COPYFILE_EXCL | fsc.COPYFILE_FICLONE);
        return await chmod(target, 0o644);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // Another disk, a filesystem without hard links, or an inode at its link limit.
        if (
          this.linkable &&
          (code === 'EXDEV' || code === 'EPERM' || code === 'EMLINK' || code === 'ENOTSUP' || code === 'EOPNOTSUPP')
        ) {
          this.linkable = false;
          continue;
        }
        // Another worker process on this cache evicted it since the lookup: fetched again, once.
        if (code === 'ENOENT' && !refetched) {
          refetched = true;
          const n = await this.o.cache.fetch(this.o.storage, this.keyOf, [blob], this.o.signal);
          this.report.bytesFetched += n;
          continue;
        }
        throw err;
      }
    }
  }
}
