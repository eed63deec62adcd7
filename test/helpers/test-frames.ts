// Real image files from ffmpeg's test sources (lavfi), for the tests of what the worker and the service do with
// rendered frames: any size, count and format without Blender.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Writes `frames` frames of the lavfi `source` (`testsrc=size=64x48:rate=24`, `color=c=0x808080:size=64x48`) to
 * `out`, one file or an image-sequence pattern such as `f_%04d.png`; `args` go just before `out` (`-pix_fmt`, `-c:v`).
 */
export async function writeTestFrames(
  out: string,
  source: string,
  { frames = 1, args = [] }: { frames?: number; args?: string[] } = {},
): Promise<void> {
  await run('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    source,
    '-frames:v',
    String(frames),
    ...args,
    out,
  ]);
}
