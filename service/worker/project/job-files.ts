// A job's working folder on a worker: the uploaded source fetched from object storage and
// unpacked once (or, for a blob project, assembled from this worker's blob cache), then reused
// by validation and every render chunk on this machine. Everything a job writes stays under
// `<workRoot>/<jobId>/`.
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { JobRecord } from '../../ports/jobs.js';
import type { ObjectStorage } from '../../ports/storage.js';
import type { PackManifest } from '../../../shared/pack/manifest.js';
import type { UnpackLimits } from '../../../zip/rules.js';
import { unpackSource } from '../../../zip/unpack.js';
import { assembleBlobProject } from './assemble-blobs.js';
import type { BlobCache, BlobFetchReport } from './blob-cache.js';

export interface PreparedProject {
  /** The job's folder. */
  jobDir: string;
  /** The unpacked project folder. */
  root: string;
  /** Paths relative to `root`, `/`-separated, as the client knows them (see bareBlend). */
  files: string[];
  manifest: PackManifest | null;
  /**
   * A bare .blend upload: `name` is the client's file name, which `files` lists and every answer
   * shows; `file` the fixed safe name it has on disk (the client's may hold spaces, any script,
   * `:`; sanitising it changed what users saw and made different names collide). Absent for a zip,
   * whose entries are unpacked under their own (checked) names, and in project.json files written
   * before it existed (their `files` name the file on disk).
   */
  bareBlend?: { name: string; file: string };
  /** A blob project: what its assembly took from this worker's blob cache. Absent for a zip or .blend. */
  blobCache?: BlobFetchReport;
}

/** What a bare .blend is called on disk, whatever its upload was called. */
const BARE_BLEND_FILE = 'scene.blend';

const PROJECT_INFO = 'project.json';

export function jobDirOf(workRoot: string, jobId: string): string {
  if (!/^[A-Za-z0-9-]+$/.test(jobId)) throw new Error(`bad job id ${jobId}`);
  return path.join(workRoot, jobId);
}

/** Downloads the source into the job folder (atomically: a partial download is never reused). */
async function fetchSource(storage: ObjectStorage, key: string, dest: string, signal: AbortSignal): Promise<void> {
  const tmp = `${dest}.part`;
  await pipeline(await storage.get(key), createWriteStream(tmp), { signal });
  await rename(tmp, dest);
}

/**
 * The job's project, unpacked. A second call (a retried task, a chunk after validation) reuses
 * the folder; `fresh` starts over (validation always does, so a retry never sees half a project).
 */
export async function prepareProject(
  rec: JobRecord,
  opts: {
    storage: ObjectStorage;
    workRoot: string;
    signal: AbortSignal;
    blobCache: BlobCache;
    limits?: Partial<UnpackLimits>;
    fresh?: boolean;
  },
): Promise<PreparedProject> {
  const jobDir = jobDirOf(opts.workRoot, rec.job.id);
  const info = path.join(jobDir, PROJECT_INFO);
  if (!opts.fresh) {
    try {
      const known = JSON.parse(await readFile(info, 'utf8')) as PreparedProject;
      return known;
    } catch {
      // not prepared yet on this machine
    }
  }
  await rm(info, { force: true });
  await mkdir(jobDir, { recursive: true });
  if (rec.internal.sourceFormat === 'blobs') {
    const assembled = await assembleBlobProject({
      storage: opts.storage,
      projectKey: rec.internal.sourceKey,
      workspaceId: rec.job.workspaceId,
      jobDir,
      cache: opts.blobCache,
      signal: opts.signal,
      ...(opts.limits ? { limits: opts.limits } : {}),
    });
    const prepared: PreparedProject = {
      jobDir,
      root: assembled.root,
      files: assembled.files,
      manifest: assembled.manifest,
      blobCache: assembled.blobCache,
    };
    await writeFile(info, JSON.stringify(prepared));
    return prepared;
  }
  const source = path.join(jobDir, rec.internal.fileType === 'zip' ? 'source.zip' : 'source.blend');
  await fetchSource(opts.storage, rec.internal.sourceKey, source, opts.signal);
  const unpacked = await unpackSource({
    source,
    fileType: rec.internal.fileType,
    jobDir,
    fileName: BARE_BLEND_FILE,
    signal: opts.signal,
    ...(opts.limits ? { limits: opts.limits } : {}),
  });
  await rm(source, { force: true });
  const prepared: PreparedProject = { jobDir, root: unpacked.root, files: unpacked.files, manifest: unpacked.manifest };
  if (rec.internal.fileType === 'blend') {
    // The job's sceneFile.name is the upload's fileName (a bare name: the API refuses folders).
    const name = rec.job.sceneFile?.name || BARE_BLEND_FILE;
    prepared.bareBlend = { name, file: BARE_BLEND_FILE };
    prepared.files = [name];
  }
  await writeFile(info, JSON.stringify(prepared));
  return prepared;
}

/**
 * Where a project path (`/`-separated, as in `files` and `pathToFileForRender`) is on disk. A bare
 * .blend project holds that one file, so any path means it: jobs validated before bareBlend
 * existed name it by its old sanitised name.
 */
export function projectFilePath(project: Pick<PreparedProject, 'root' | 'bareBlend'>, relPath: string): string {
  if (project.bareBlend) return path.join(project.root, project.bareBlend.file);
  return path.join(project.root, ...relPath.split('/'));
}

/** Removes a job's working folder (after finalize, or when it is canceled or fails). */
export async function removeJobDir(workRoot: string, jobId: string): Promise<void> {
  await rm(jobDirOf(workRoot, jobId), { recursive: true, force: true });
}
