// Frame thumbnails (extension frame-thumbnails): a small image of each finished frame, stored
// beside the job's outputs under the key service/domain/thumbnails.ts names, so the job's page
// shows the frames while the job still renders. A slot makes the thumbnail of each frame it
// finishes (FrameThumbnails, after the frame's files are in `out/` and its statistics recorded);
// finalize makes those still missing (frames copied by a requeue or an estimate, a thumbnail
// that failed). A thumbnail never fails a frame or a job: failures are logged and passed over.
//
// A PNG frame already within the thumbnail size is its own thumbnail (on a local store a hard
// link: no ffmpeg start, ~50 ms of CPU a frame, beside Blender); any other frame goes through
// ffmpeg (ffmpeg.ts makeThumbnails: scaled, EXR tone-mapped, JPEG). Stored without a sync, as
// early outputs are: a sync per frame stalls Blender's own saves, and a thumbnail lost to a power
// cut is made again by finalize.
import { mkdtemp, open, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { THUMBNAIL_MAX_SIDE } from '../../../shared/api/thumbnails.js';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import { parseThumbnailKey, thumbnailFolder, thumbnailKey } from '../../domain/thumbnails.js';
import { ObjectExistsError, type ObjectStorage } from '../../ports/storage.js';
import { filesOfFrame, placeOf, type OutputLayout } from './chunk-files.js';
import type { FfmpegRunOptions } from './ffmpeg.js';
import { makeThumbnails } from './ffmpeg-images.js';

/** A finished frame's image: the first camera view's file. */
export interface FrameImage {
  frame: number;
  /** Absolute path of the frame's file. */
  file: string;
}

export interface ThumbnailStoreOptions {
  storage: ObjectStorage;
  /** The job's output prefix (jobOutputPrefix). */
  prefix: string;
  /** Scratch folder for ffmpeg's output (the job's folder). */
  workDir: string;
  /** ffmpeg executable (default: from PATH). */
  ffmpeg?: Pick<FfmpegRunOptions, 'ffmpegPath'>;
  /** Stops ffmpeg and the uploads. Default none. */
  signal?: AbortSignal;
  /** Longest side. Default THUMBNAIL_MAX_SIDE (256). */
  maxSide?: number;
}

/** Frames ffmpeg takes in one process at most (a process start is ~50 ms; its arguments stay short). */
const BATCH = 200;

/** The image of `frame` in `out/`: its first camera file (the first view of a stereo frame). */
export function frameImage(final: FinalConfig, out: OutputLayout, frame: number): FrameImage | undefined {
  const first = filesOfFrame(final, frame).find((f) => f.kind === 'camera');
  return first ? { frame, file: placeOf(out, first) } : undefined;
}

/** Frames of the job that have a thumbnail already. */
export async function framesWithThumbnails(storage: Pick<ObjectStorage, 'list'>, prefix: string): Promise<Set<number>> {
  const frames = new Set<number>();
  for (const { key } of await storage.list(`${thumbnailFolder(prefix)}/`)) {
    const t = parseThumbnailKey(key);
    if (t) frames.add(t.frame);
  }
  return frames;
}

/** Stores `key` from `file`; an object already there (the frame's thumbnail from an earlier try) is kept. */
async function putOnce(o: ThumbnailStoreOptions, key: string, file: string): Promise<boolean> {
  try {
    await o.storage.putFile(key, file, { sync: false, ...(o.signal ? { signal: o.signal } : {}) });
    return true;
  } catch (err) {
    if (err instanceof ObjectExistsError) return false;
    throw err;
  }
}

/** Makes and stores the thumbnails of `images`; answers how many were stored. */
export async function storeThumbnails(o: ThumbnailStoreOptions, images: readonly FrameImage[]): Promise<number> {
  const side = o.maxSide ?? THUMBNAIL_MAX_SIDE;
  let stored = 0;
  const viaFfmpeg = new Map<string, FrameImage[]>();
  for (const img of images) {
    o.signal?.throwIfAborted();
    const size = /\.png$/i.test(img.file) ? await pngSize(img.file) : undefined;
    if (size && size.width <= side && size.height <= side) {
      if (await putOnce(o, thumbnailKey(o.prefix, img.frame, 'png'), img.file)) stored++;
      continue;
    }
    // ffmpeg reads a sequence of one file type: frames are grouped by theirs.
    const ext = path.extname(img.file).toLowerCase();
    viaFfmpeg.set(ext, [...(viaFfmpeg.get(ext) ?? []), img]);
  }
  for (const group of viaFfmpeg.values()) {
    for (let i = 0; i < group.length; i += BATCH) stored += await throughFfmpeg(o, group.slice(i, i + BATCH), side);
  }
  return stored;
}

async function throughFfmpeg(o: ThumbnailStoreOptions, images: readonly FrameImage[], side: number): Promise<number> {
  const outDir = await mkdtemp(path.join(o.workDir, 'thumbs-'));
  try {
    const made = await makeThumbnails({
      inputs: images.map((i) => i.file),
      outDir,
      maxSide: side,
      tmpDir: o.workDir,
      ...o.ffmpeg,
      ...(o.signal ? { signal: o.signal } : {}),
    });
    let stored = 0;
    for (const [i, file] of made.entries())
      if (await putOnce(o, thumbnailKey(o.prefix, images[i]!.frame, 'jpg'), file)) stored++;
    return stored;
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

/**
 * The thumbnails of `images` that the job lacks, made now (finalize: frames copied from a requeued
 * job or an estimate, and any a slot failed to make). Answers how many were made.
 */
export async function fillMissingThumbnails(o: ThumbnailStoreOptions, images: readonly FrameImage[]): Promise<number> {
  if (images.length === 0) return 0;
  const have = await framesWithThumbnails(o.storage, o.prefix);
  const missing = images.filter((i) => !have.has(i.frame));
  return missing.length ? storeThumbnails(o, missing) : 0;
}

/**
 * The thumbnails of a job's frames as a slot finishes them, one after another beside the job's
 * bookkeeping (never in the way of Blender's output or the progress writes). `settled` waits for
 * those asked for so far: a task ends only once its frames' thumbnails are stored, while its
 * worker may still write under the job (a remote worker's token opens the job only then).
 */
export class FrameThumbnails {
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly o: Omit<ThumbnailStoreOptions, 'signal'>) {}

  add(image: FrameImage | undefined, log: Logger): void {
    if (!image) return;
    this.chain = this.chain
      .then(() => storeThumbnails(this.o, [image]))
      .then(
        () => undefined,
        (err: unknown) => log.warn({ err, frame: image.frame }, 'frame thumbnail not made'),
      );
  }

  settled(): Promise<void> {
    return this.chain;
  }
}

/** Width and height from a PNG's IHDR, or undefined for anything else. */
export async function pngSize(file: string): Promise<{ width: number; height: number } | undefined> {
  const fh = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(24), 0, 24, 0);
    if (bytesRead < 24 || buffer.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') return undefined;
    return { width: buffer.readUInt32BE(16), height: buffer.readUInt32BE(20) };
  } finally {
    await fh.close();
  }
}
