// The only module that starts ffmpeg and ffprobe. Processes get an argument array (no shell, so
// no quoting of user file names), are killed when the AbortSignal fires, and failures carry the
// tail of stderr, which is where ffmpeg says what went wrong.
import { spawn } from 'node:child_process';
import { mkdtemp, rename, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface FfmpegRunOptions {
  /** Kills the process (SIGKILL) and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Executables. Defaults: 'ffmpeg' and 'ffprobe' from PATH. */
  ffmpegPath?: string;
  ffprobePath?: string;
  /** Each line ffmpeg prints on stderr, as it comes (a task log). Default none. */
  onLine?: (stream: 'stderr', line: string) => void;
}

export class FfmpegError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
    /** Last few KiB of stderr. */
    readonly stderrTail: string,
  ) {
    super(stderrTail ? `${message}: ${stderrTail.trim().split('\n').slice(-5).join(' | ')}` : message);
    this.name = 'FfmpegError';
  }
}

const TAIL_BYTES = 4096;
const MAX_STDOUT = 4 * 1024 * 1024;

/** Runs one process to completion; resolves with stdout (used for ffprobe's JSON). */
function run(
  cmd: string,
  args: string[],
  signal: AbortSignal | undefined,
  onLine?: FfmpegRunOptions['onLine'],
): Promise<string> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    let out = '';
    let partial = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      tail = (tail + d).slice(-TAIL_BYTES);
      if (!onLine) return;
      // ffmpeg redraws its progress line with \r: each redraw is a line of the log.
      const lines = (partial + d).split(/\r\n|\r|\n/);
      partial = lines.pop() ?? '';
      for (const l of lines) if (l.trim()) onLine('stderr', l);
    });
    child.stderr.on('end', () => {
      if (onLine && partial.trim()) onLine('stderr', partial);
    });
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (out.length < MAX_STDOUT) out += d;
    });
    const onAbort = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err: NodeJS.ErrnoException) => {
      signal?.removeEventListener('abort', onAbort);
      reject(
        err.code === 'ENOENT'
          ? new FfmpegError(`${cmd} not found: install ffmpeg (Debian: apt-get install ffmpeg)`, null, '')
          : err,
      );
    });
    child.on('close', (code, sig) => {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) return reject(signal.reason);
      if (code === 0) return resolve(out);
      reject(new FfmpegError(`${path.basename(cmd)} ${sig ? `killed by ${sig}` : `exited with ${code}`}`, code, tail));
    });
  });
}

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

/**
 * Sequentially numbered symlinks (`00000001.ext`, ...) in a new folder: any list of files of one
 * type (gaps, odd names) becomes one image2 sequence, numbered from 1.
 */
async function linkSequence(
  files: readonly string[],
  tmpDir: string | undefined,
  label: string,
  signal?: AbortSignal,
): Promise<{ dir: string; pattern: string }> {
  if (files.length === 0) throw new TypeError('ffmpeg: empty frame list');
  const ext = path.extname(files[0]!).toLowerCase();
  if (files.some((f) => path.extname(f).toLowerCase() !== ext))
    throw new TypeError('ffmpeg: frames must share one file type');
  const dir = await mkdtemp(path.join(tmpDir ?? tmpdir(), label));
  try {
    for (const [i, f] of files.entries()) {
      signal?.throwIfAborted();
      await symlink(path.resolve(f), path.join(dir, `${String(i + 1).padStart(8, '0')}${ext}`));
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return { dir, pattern: path.join(dir, `%08d${ext}`) };
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
      await run(o.ffmpegPath ?? 'ffmpeg', args, o.signal, o.onLine);
      await rename(part, o.out);
    } finally {
      await rm(part, { force: true });
    }
  } finally {
    if (linkDir) await rm(linkDir, { recursive: true, force: true });
  }
}

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
  await run(o.ffmpegPath ?? 'ffmpeg', args, o.signal, o.onLine);
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
      await run(o.ffmpegPath ?? 'ffmpeg', args(linear, false), o.signal, o.onLine);
    } catch (err) {
      if (!linear || !(err instanceof FfmpegError) || !/No such filter/i.test(err.stderrTail)) throw err;
      await run(o.ffmpegPath ?? 'ffmpeg', args(false, true), o.signal, o.onLine);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return o.inputs.map((_, i) => path.join(o.outDir, `${String(i + 1).padStart(8, '0')}.jpg`));
}

export interface ProbeResult {
  codec: string;
  pixFmt: string | null;
  width: number;
  height: number;
  /** Frames per second (from the stream's frame rate), e.g. 23.976. */
  fps: number | null;
  /** The same as ffmpeg's rational, e.g. "24000/1001". */
  frameRate: string | null;
  /** Counted by decoding when `countFrames`, otherwise from the container (null if unknown). */
  frames: number | null;
  durationSeconds: number | null;
}

interface FfprobeJson {
  streams?: Array<Record<string, string | number | undefined>>;
  format?: { duration?: string };
}

/** The first video stream of a file, through `ffprobe -of json`. */
export async function probe(file: string, o: FfmpegRunOptions & { countFrames?: boolean } = {}): Promise<ProbeResult> {
  const args = [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    ...(o.countFrames ? ['-count_frames'] : []),
    '-show_entries',
    'stream=codec_name,pix_fmt,width,height,r_frame_rate,avg_frame_rate,nb_frames,nb_read_frames:format=duration',
    '-of',
    'json',
    file,
  ];
  const json = JSON.parse(await run(o.ffprobePath ?? 'ffprobe', args, o.signal)) as FfprobeJson;
  const s = json.streams?.[0];
  if (!s) throw new FfmpegError(`ffprobe found no video stream in ${file}`, 0, '');
  const num = (v: unknown) =>
    v === undefined || v === 'N/A' || v === '' || !Number.isFinite(Number(v)) ? null : Number(v);
  const rate =
    typeof s.avg_frame_rate === 'string' && s.avg_frame_rate !== '0/0'
      ? s.avg_frame_rate
      : typeof s.r_frame_rate === 'string'
        ? s.r_frame_rate
        : null;
  let fps: number | null = null;
  if (rate) {
    const [n, d] = rate.split('/').map(Number);
    fps = n !== undefined && d ? n / d : (n ?? null);
  }
  return {
    codec: String(s.codec_name ?? 'unknown'),
    pixFmt: typeof s.pix_fmt === 'string' ? s.pix_fmt : null,
    width: Number(s.width ?? 0),
    height: Number(s.height ?? 0),
    fps,
    frameRate: rate,
    frames: num(s.nb_read_frames) ?? num(s.nb_frames),
    durationSeconds: num(json.format?.duration),
  };
}
