// Still images made from frames: a job's preview and its frames' thumbnails, through ffmpeg.ts.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { FfmpegError, linkSequence, runFfmpeg, type FfmpegRunOptions } from './ffmpeg.js';

export interface PreviewOptions extends FfmpegRunOptions {
  /** An image (PNG, JPEG, EXR, ...) or a video, whose first frame is used. */
  input: string;
  /** Output path; .jpg/.jpeg gives JPEG, .png gives PNG. */
  out: string;
  /** Widest the preview may be; smaller images are not enlarged. Default 320. */
  maxWidth?: number;
}

/** A small preview image, keeping the aspect ratio. */
export async function makePreview(o: PreviewOptions): Promise<void> {
  const maxWidth = o.maxWidth ?? 320;
  const jpeg = /\.jpe?g$/i.test(o.out);
  const args = [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    '-y',
    '-i',
    o.input,
    '-frames:v',
    '1',
    '-vf',
    `scale='min(${maxWidth},iw)':-1`,
    ...(jpeg ? ['-q:v', '4', '-pix_fmt', 'yuvj420p'] : []),
    '-update',
    '1',
    o.out,
  ];
  await runFfmpeg(o.ffmpegPath ?? 'ffmpeg', args, o.signal, o.onLine);
}

export interface ThumbnailsOptions extends FfmpegRunOptions {
  /**
   * Images of one file type (PNG, JPEG, EXR, ...) and one size, as a job's frames are (the encoder
   * keeps the first image's output size): a thumbnail each, in this order.
   */
  inputs: readonly string[];
  /** An empty folder the thumbnails go to: `00000001.jpg`, `00000002.jpg`, ... one per input. */
  outDir: string;
  /** Longest side, pixels; smaller images are not enlarged. Default 256. */
  maxSide?: number;
  /** Where the numbered links of the inputs go. Default: the OS temp folder. */
  tmpDir?: string;
}

/** Scene-linear formats: their values are light, not display values, and need a view transform. */
const LINEAR = /\.(exr|hdr)$/i;

/**
 * A tone map for scene-linear frames: highlights above 1 rolled off (mobius keeps the values
 * within range as they are), then the sRGB curve, as Blender's Standard view shows them. Without
 * it an EXR thumbnail is dark and its highlights clip.
 */
const TONE_MAP =
  'zscale=tin=linear:t=linear:npl=100,format=gbrpf32le,tonemap=mobius:desat=0,zscale=t=iec61966-2-1:m=bt709:r=full,';

/**
 * JPEG thumbnails of a run of images in one ffmpeg process (each start costs ~50 ms of CPU),
 * keeping the aspect ratio. Answers the thumbnails' paths in input order. Scene-linear inputs are
 * tone-mapped; where this ffmpeg lacks zscale (built without zimg), the EXR decoder's sRGB curve
 * stands in (no roll-off: highlights clip).
 */
export async function makeThumbnails(o: ThumbnailsOptions): Promise<string[]> {
  const side = o.maxSide ?? 256;
  const linear = LINEAR.test(o.inputs[0] ?? '');
  const { dir, pattern } = await linkSequence(o.inputs, o.tmpDir, 'rb-thumbs-', o.signal);
  const scale = `scale=w='min(${side},iw)':h='min(${side},ih)':force_original_aspect_ratio=decrease,format=yuvj420p`;
  const args = (toneMap: boolean, trc: boolean) => [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    '-y',
    ...(trc ? ['-apply_trc', 'iec61966_2_1'] : []),
    '-start_number',
    '1',
    '-i',
    pattern,
    '-vf',
    `${toneMap ? TONE_MAP : ''}${scale}`,
    '-q:v',
    '4',
    '-start_number',
    '1',
    '-f',
    'image2',
    path.join(o.outDir, '%08d.jpg'),
  ];
  try {
    try {
      await runFfmpeg(o.ffmpegPath ?? 'ffmpeg', args(linear, false), o.signal, o.onLine);
    } catch (err) {
      if (!linear || !(err instanceof FfmpegError) || !/No such filter/i.test(err.stderrTail)) throw err;
      await runFfmpeg(o.ffmpegPath ?? 'ffmpeg', args(false, true), o.signal, o.onLine);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return o.inputs.map((_, i) => path.join(o.outDir, `${String(i + 1).padStart(8, '0')}.jpg`));
}
