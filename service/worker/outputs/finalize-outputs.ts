// Packages a rendered job: stores every output file, streams a ZIP of the frames and one of the
// compositor outputs into storage, encodes an MP4 per camera view when asked, and makes a preview
// and the frame thumbnails the render's slots did not make (those media: output-media.ts).
//
// Nothing is published by this module: it returns the outputs for the caller to record with the
// job's move to `completed`. Until then the objects are invisible to clients, and on any failure
// or abort they are deleted again, so a canceled job leaves nothing in storage. A retried finalize
// first clears what an interrupted earlier attempt left under the job's prefix.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { JobInternal, OutputFile } from '../../ports/jobs.js';
import type { ObjectStorage } from '../../ports/storage.js';
import type { FfmpegRunOptions } from './ffmpeg.js';
import { encodeVideos, missingThumbnails, preview } from './output-media.js';
import { isThumbnailKey } from '../../domain/thumbnails.js';
import { safeSegment } from '../../../shared/safe-segment.js';
import { jobOutputPrefix, relativeKey, safeRelativePath, uniqueName } from '../../domain/output-keys.js';
import { streamZip } from '../../../zip/stream-zip.js';

/** One file the render produced. */
export interface ProducedFile {
  /** Local path, absolute or relative to outputDir; must lie inside outputDir. */
  path: string;
  outputType: 'frame' | 'composite';
  /** Stereo/multiview view suffix (e.g. 'L'); null for a single view. */
  view: string | null;
  /** Frame number; default: the last run of digits in the file name (0 when there is none). */
  frame?: number;
  /** Composite outputs: path below the compositor output root, kept as the ZIP entry. Default: the file name. */
  relativePath?: string;
  compositeNodeName?: string;
}

export interface FinalizeOptions {
  jobId: string;
  workspaceId: string;
  /** The job's local output folder. */
  outputDir: string;
  files: readonly ProducedFile[];
  storage: ObjectStorage;
  /** Encode an MP4 per view from the PNG/JPEG frames. Default false. */
  videoOutput?: boolean;
  /** Blender's fps and fps_base (the video plays at fps / fpsBase). Needed for video; fpsBase defaults to 1. */
  fps?: number;
  fpsBase?: number;
  /** Aborting deletes whatever was stored and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Where the objects go. Default jobOutputPrefix(workspaceId, jobId). */
  keyPrefix?: string;
  /** Widest preview, in pixels. Default 320. */
  previewMaxWidth?: number;
  /** Files stored at once. Default 4. */
  uploadConcurrency?: number;
  /** Scratch folder for the MP4 and preview before upload. Default: the OS temp folder. */
  workDir?: string;
  /** ffmpeg/ffprobe executables (default: from PATH). */
  ffmpeg?: Pick<FfmpegRunOptions, 'ffmpegPath' | 'ffprobePath'>;
  /**
   * Objects stored already, possibly unsynced, by absolute local path (early-outputs.ts): a file
   * whose key here is the one it gets now is not stored again, only persisted. Default none.
   */
  reuse?: ReadonlyMap<string, { key: string; size: number }>;
}

export interface FinalizeResult {
  outputs: NonNullable<JobInternal['outputs']>;
  previewKey: string | null;
  /** Problems that did not fail the job (e.g. an MP4 that would not encode); the frames are the product. */
  warnings: string[];
}

/** A produced file found on disk, with its name and frame number. */
export interface LocalFile extends ProducedFile {
  abs: string;
  fileName: string;
  frame: number;
}

function frameNumber(fileName: string): number {
  const m = /(\d+)(?!.*\d)/.exec(path.parse(fileName).name);
  return m ? Number(m[1]) : 0;
}

function resolveInside(outputDir: string, p: string): string {
  const abs = path.resolve(outputDir, p);
  const rel = path.relative(outputDir, abs);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel))
    throw new Error(`output file outside the job's output folder: ${p}`);
  return abs;
}

const byFrame = (a: LocalFile, b: LocalFile) =>
  a.frame - b.frame || (a.view ?? '').localeCompare(b.view ?? '') || a.fileName.localeCompare(b.fileName);

/**
 * Runs `fn` over `items` with at most `n` at a time. After a failure no new item starts, and it
 * rejects only once those in flight settled: cleanup must not race a write still finishing.
 */
async function pool<T, R>(items: readonly T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(n, items.length)) }, worker));
  if (failure) throw failure.err;
  return results;
}

/** The files to store, their keys, and the objects stored early under those very keys (kept). */
async function planKeys(o: FinalizeOptions) {
  const outputDir = path.resolve(o.outputDir);
  const prefix = o.keyPrefix ?? jobOutputPrefix(o.workspaceId, o.jobId);
  const local: LocalFile[] = o.files.map((f) => {
    const abs = resolveInside(outputDir, f.path);
    const fileName = path.basename(abs);
    return { ...f, abs, fileName, frame: f.frame ?? frameNumber(fileName) };
  });
  const frames = local.filter((f) => f.outputType === 'frame').sort(byFrame);
  const composites = local
    .filter((f) => f.outputType === 'composite')
    .map((f) => ({ ...f, relativePath: safeRelativePath(f.relativePath ?? f.fileName) }))
    .sort((a, b) => a.relativePath.localeCompare(b.relativePath) || byFrame(a, b));
  await Promise.all(
    local.map(async (f) => {
      if (!(await stat(f.abs)).isFile()) throw new Error(`output is not a file: ${f.path}`);
    }),
  );
  // Keys first (in order: a name taken twice gets -2): what was stored early under its key is kept.
  const frameKeys = new Set<string>();
  const frameKey = new Map(
    frames.map((f) => [f, `${prefix}/frames/${uniqueName(safeSegment(f.fileName), frameKeys)}`]),
  );
  const compositeKeys = new Set<string>();
  const compositeKey = new Map(
    composites.map((f) => [f, `${prefix}/composites/${uniqueName(relativeKey(f.relativePath), compositeKeys)}`]),
  );
  const kept = new Map<string, number>();
  for (const [f, key] of [...frameKey, ...compositeKey]) {
    const early = o.reuse?.get(f.abs);
    if (early?.key === key) kept.set(key, early.size);
  }
  return { prefix, frames, composites, frameKey, compositeKey, kept };
}

export async function finalizeOutputs(o: FinalizeOptions): Promise<FinalizeResult> {
  const { storage, signal } = o;
  signal?.throwIfAborted();
  const { prefix, frames, composites, frameKey, compositeKey, kept } = await planKeys(o);

  const workDir = await mkdtemp(path.join(o.workDir ?? tmpdir(), 'rb-finalize-'));
  try {
    // Leftovers of an interrupted attempt go; objects stored early for these very files stay.
    await deleteUnpublished(storage, prefix, kept);
    // Rendered files and the media made here are never written again: stored as files (a local
    // store on the same disk links them instead of copying).
    const put = (key: string, file: string) => storage.putFile(key, file, signal ? { signal } : {});
    const warnings: string[] = [];
    // Objects stored early were stored unsynced (early-outputs.ts): on disk before they are published.
    const persisted = storage.persist([...kept.keys()]);
    persisted.catch(() => undefined);

    // The MP4s, preview and missing thumbnails (ffmpeg, CPU) are made while the files and zips (disk) are stored.
    const media = (async () => ({
      videos: o.videoOutput ? await encodeVideos(o, prefix, frames, workDir, put, warnings) : [],
      previewKey: await preview(o, prefix, frames.length > 0 ? frames : composites, workDir, put, warnings),
      thumbnails: await missingThumbnails(o, prefix, frames, workDir, warnings),
    }))();
    // Awaited below; marked handled now, as a cancel can reject it while files are still being stored.
    media.catch(() => undefined);
    let stored;
    try {
      const store = async (key: string, file: string) => kept.get(key) ?? (await put(key, file)).size;
      stored = await storeFiles(o, prefix, { frames, composites, frameKey, compositeKey }, store);
    } catch (err) {
      // Let ffmpeg and the syncs settle first: the cleanup below must not race a write still finishing.
      await Promise.all([media.catch(() => undefined), persisted.catch(() => undefined)]);
      throw err;
    }
    const { frameOut, compositeOut, framesZipKey, compositesZipKey } = stored;
    const { videos, previewKey } = await media;
    await persisted;

    signal?.throwIfAborted();
    return {
      outputs: { frames: frameOut, composites: compositeOut, framesZipKey, compositesZipKey, videos },
      previewKey,
      warnings,
    };
  } catch (err) {
    // Whatever was stored would be orphaned: the job never records it. Its thumbnails stay: the
    // job's page lists them from storage, whatever becomes of the job.
    await deleteUnpublished(storage, prefix).catch(() => undefined);
    throw err;
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/** Deletes what the job's output prefix holds but its thumbnails and the objects of `keep`. */
export async function deleteUnpublished(
  storage: ObjectStorage,
  prefix: string,
  keep: ReadonlyMap<string, unknown> = new Map(),
): Promise<void> {
  for (const { key } of await storage.list(prefix))
    if (!keep.has(key) && !isThumbnailKey(prefix, key)) await storage.delete(key);
}

interface Keyed {
  frames: LocalFile[];
  composites: (LocalFile & { relativePath: string })[];
  frameKey: Map<LocalFile, string>;
  compositeKey: Map<LocalFile, string>;
}

/** Stores every file under its key (`store` answers its size) and streams the two ZIPs. */
async function storeFiles(
  o: FinalizeOptions,
  prefix: string,
  k: Keyed,
  store: (key: string, file: string) => Promise<number>,
) {
  const frameOut = await pool(k.frames, o.uploadConcurrency ?? 4, async (f): Promise<OutputFile> => {
    const key = k.frameKey.get(f)!;
    const size = await store(key, f.abs);
    return { key, fileName: f.fileName, view: f.view, outputType: 'frame', size };
  });
  const compositeOut = await pool(k.composites, o.uploadConcurrency ?? 4, async (f): Promise<OutputFile> => {
    const key = k.compositeKey.get(f)!;
    const size = await store(key, f.abs);
    return {
      key,
      fileName: f.fileName,
      relativePath: f.relativePath,
      view: f.view,
      outputType: 'composite',
      ...(f.compositeNodeName !== undefined ? { compositeNodeName: f.compositeNodeName } : {}),
      size,
    };
  });
  const zipTo = async (key: string, entries: { path: string; name: string }[]) => {
    if (entries.length === 0) return null;
    await streamZip(entries, (body) => o.storage.put(key, body), o.signal);
    return key;
  };
  const frameNames = new Set<string>();
  const framesZipKey = await zipTo(
    `${prefix}/archives/${o.jobId}-frames.zip`,
    k.frames.map((f) => ({ path: f.abs, name: uniqueName(f.fileName, frameNames) })),
  );
  const compositeNames = new Set<string>();
  const compositesZipKey = await zipTo(
    `${prefix}/archives/${o.jobId}-composites.zip`,
    k.composites.map((f) => ({ path: f.abs, name: uniqueName(f.relativePath, compositeNames) })),
  );
  return { frameOut, compositeOut, framesZipKey, compositesZipKey };
}
