// MP4 videos of a job's frames: H.264 at the scene's exact frame rate, started through ffmpeg.ts.
import { rename, rm } from 'node:fs/promises';
import { linkSequence, runFfmpeg, type FfmpegRunOptions } from './ffmpeg.js';

/** fps / fpsBase as an exact rational for ffmpeg: 24 / 1.001 -> "24000/1001". */
export function frameRate(fps: number, fpsBase = 1): string {
  if (!(fps > 0) || !(fpsBase > 0)) throw new RangeError(`invalid frame rate ${fps}/${fpsBase}`);
  let num = fps;
  let den = fpsBase;
  // Scale both until whole (Blender's fps_base is a float such as 1.001).
  for (let i = 0; i < 6 && (!Number.isInteger(num) || !Number.isInteger(den)); i++) {
    num *= 10;
    den *= 10;
  }
  num = Math.round(num);
  den = Math.round(den);
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const g = gcd(num, den);
  return den / g === 1 ? `${num / g}` : `${num / g}/${den / g}`;
}

export interface EncodeMp4Options extends FfmpegRunOptions {
  /**
   * The frames: either a printf pattern (`/dir/f_%04d.png`, numbered from `startNumber`) or an
   * ordered list of files of one extension. A list may have gaps (missing frame numbers): its
   * frames play one after another.
   */
  framePattern?: string;
  /** First number of `framePattern`. Default 1 (as for ffmpeg's image2 demuxer, it must exist). */
  startNumber?: number;
  frames?: readonly string[];
  /** Blender's fps and fps_base: the video plays at fps / fpsBase. fpsBase defaults to 1. */
  fps: number;
  fpsBase?: number;
  /** Output .mp4 path; written under a temporary name and renamed when complete. */
  out: string;
  /** x264 constant rate factor (lower is better). Default 18 (visually near lossless). */
  crf?: number;
  /** x264 preset. Default 'medium'. */
  preset?: string;
  /** Where the numbered links of a frame list go. Default: the OS temp folder. */
  tmpDir?: string;
}

/** Encodes frames to H.264/yuv420p MP4, padding odd sizes to even (x264 refuses odd ones). */
export async function encodeMp4(o: EncodeMp4Options): Promise<void> {
  if ((o.framePattern === undefined) === (o.frames === undefined))
    throw new TypeError('encodeMp4 needs exactly one of framePattern or frames');
  const rate = frameRate(o.fps, o.fpsBase ?? 1);
  let linkDir: string | undefined;
  let pattern = o.framePattern;
  let start = o.startNumber ?? 1;
  try {
    if (o.frames) {
      const linked = await linkSequence(o.frames, o.tmpDir, 'rb-mp4-', o.signal);
      linkDir = linked.dir;
      pattern = linked.pattern;
      start = 1;
    }
    const part = `${o.out}.part`;
    const args = [
      '-hide_banner',
      '-nostdin',
      '-loglevel',
      'error',
      '-y',
      '-framerate',
      rate,
      '-start_number',
      String(start),
      '-i',
      pattern!,
      '-vf',
      'pad=ceil(iw/2)*2:ceil(ih/2)*2',
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      '-preset',
      o.preset ?? 'medium',
      '-crf',
      String(o.crf ?? 18),
      '-r',
      rate,
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      part,
    ];
    try {
      await runFfmpeg(o.ffmpegPath ?? 'ffmpeg', args, o.signal, o.onLine);
      await rename(part, o.out);
    } finally {
      await rm(part, { force: true });
    }
  } finally {
    if (linkDir) await rm(linkDir, { recursive: true, force: true });
  }
}
