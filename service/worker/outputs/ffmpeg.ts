// The only module that starts ffmpeg and ffprobe (runFfmpeg; what they are asked to make:
// ffmpeg-video.ts, ffmpeg-images.ts), and ffprobe's reading of a video. Processes get an argument
// array (no shell, so no quoting of user file names), are killed when the AbortSignal fires, and
// failures carry the tail of stderr, which is where ffmpeg says what went wrong.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
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
export function runFfmpeg(
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

/**
 * Sequentially numbered symlinks (`00000001.ext`, ...) in a new folder: any list of files of one
 * type (gaps, odd names) becomes one image2 sequence, numbered from 1.
 */
export async function linkSequence(
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
  const json = JSON.parse(await runFfmpeg(o.ffprobePath ?? 'ffprobe', args, o.signal)) as FfprobeJson;
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
