// The media a finalize makes from a job's frames with ffmpeg, beside storing them
// (finalize-outputs.ts): an MP4 per camera view, the preview, and the thumbnails the render's
// slots did not make. An ffmpeg failure is a warning (the frames are still delivered); an abort
// propagates.
import path from 'node:path';
import type { VideoFile } from '../../ports/jobs.js';
import { safeSegment } from '../../../shared/safe-segment.js';
import { uniqueName } from '../../domain/output-keys.js';
import { FfmpegError } from './ffmpeg.js';
import { makePreview } from './ffmpeg-images.js';
import { encodeMp4 } from './ffmpeg-video.js';
import type { FinalizeOptions, LocalFile } from './finalize-outputs.js';
import { fillMissingThumbnails, pngSize } from './thumbnails.js';

const VIDEO_SOURCE = /\.(png|jpe?g)$/i;
const PREVIEW_SOURCE = /\.(png|jpe?g|exr|tiff?|bmp|webp|tga|hdr)$/i;

/** Stores a made file under its key. */
type Put = (key: string, file: string) => Promise<unknown>;

/** Thumbnails of the frames that have none yet (copied by a requeue or an estimate, or failed on their slot). */
export async function missingThumbnails(
  o: FinalizeOptions,
  prefix: string,
  frames: LocalFile[],
  workDir: string,
  warnings: string[],
): Promise<number> {
  const seen = new Set<number>();
  // One a frame, of its first view (frames are sorted by frame, then view).
  const images = frames
    .filter((f) => !seen.has(f.frame) && seen.add(f.frame))
    .map((f) => ({ frame: f.frame, file: f.abs }));
  try {
    return await fillMissingThumbnails(
      {
        storage: o.storage,
        prefix,
        workDir,
        ...(o.ffmpeg ? { ffmpeg: o.ffmpeg } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
      },
      images,
    );
  } catch (err) {
    if (o.signal?.aborted) throw err;
    warnings.push(`thumbnails not made: ${(err as Error).message}`);
    return 0;
  }
}

/** ffmpeg failures become warnings (the frames are still delivered); aborts propagate. */
function softFail(err: unknown, signal: AbortSignal | undefined, warnings: string[], what: string): void {
  if (signal?.aborted || !(err instanceof FfmpegError)) throw err;
  warnings.push(`${what}: ${err.message}`);
}

/** An MP4 per view of the PNG or JPEG frames, or the reason none was made, as a warning. */
export async function encodeVideos(
  o: FinalizeOptions,
  prefix: string,
  frames: LocalFile[],
  workDir: string,
  put: Put,
  warnings: string[],
): Promise<VideoFile[]> {
  const fpsBase = o.fpsBase ?? 1;
  const fps = o.fps && o.fps > 0 && fpsBase > 0 ? Math.max(1, Math.round(o.fps / fpsBase)) : null;
  const views = new Map<string | null, LocalFile[]>();
  for (const f of frames)
    if (VIDEO_SOURCE.test(f.fileName)) (views.get(f.view) ?? views.set(f.view, []).get(f.view)!).push(f);
  if (views.size === 0 || !o.fps) {
    warnings.push(!o.fps ? 'MP4 not made: no frame rate given' : 'MP4 not made: no PNG or JPEG frames');
    return [{ format: 'mp4', label: null, key: null, fps, segment: null }];
  }
  const names = new Set<string>();
  const out: VideoFile[] = [];
  for (const [view, list] of views) {
    // Frames of one view share one extension for ffmpeg's image sequence: take the common one.
    const ext = path.extname(list[0]!.fileName).toLowerCase();
    const same = list.filter((f) => path.extname(f.fileName).toLowerCase() === ext);
    const segment = { start: same[0]!.frame, end: same[same.length - 1]!.frame };
    const file = path.join(
      workDir,
      uniqueName(`${safeSegment(view === null ? o.jobId : `${o.jobId}-${view}`)}.mp4`, names),
    );
    let key: string | null = `${prefix}/video/${path.basename(file)}`;
    try {
      await encodeMp4({
        frames: same.map((f) => f.abs),
        fps: o.fps,
        fpsBase,
        out: file,
        tmpDir: workDir,
        signal: o.signal,
        ...o.ffmpeg,
      });
      await put(key, file);
    } catch (err) {
      softFail(err, o.signal, warnings, `MP4${view === null ? '' : ` of view ${view}`} not made`);
      key = null;
    }
    out.push({ format: 'mp4', label: view, key, fps, segment });
  }
  return out;
}

/** The job's preview, from its middle frame of the first view: null when it has no image. */
export async function preview(
  o: FinalizeOptions,
  prefix: string,
  candidates: LocalFile[],
  workDir: string,
  put: Put,
  warnings: string[],
): Promise<string | null> {
  const images = candidates.filter((f) => PREVIEW_SOURCE.test(f.fileName));
  const firstView = images[0]?.view ?? null;
  const ofView = images.filter((f) => f.view === firstView);
  const middle = ofView[Math.floor((ofView.length - 1) / 2)];
  if (!middle) return null;
  const maxWidth = o.previewMaxWidth ?? 320;
  // A PNG frame already within the preview size is its own preview: no ffmpeg start (~80 ms).
  const size = await pngSize(middle.abs);
  if (size && size.width <= maxWidth) {
    const key = `${prefix}/preview.png`;
    await put(key, middle.abs);
    return key;
  }
  const file = path.join(workDir, 'preview.jpg');
  try {
    await makePreview({ input: middle.abs, out: file, maxWidth, signal: o.signal, ...o.ffmpeg });
    const key = `${prefix}/preview.jpg`;
    await put(key, file);
    return key;
  } catch (err) {
    softFail(err, o.signal, warnings, 'preview not made');
    return null;
  }
}
