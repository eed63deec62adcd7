// The baselines of bench:render: Blender run bare, as an artist or a farm manager would run it,
// timed from start to exit. One `-a` process for a range of frames (optionally pinned to a core
// and single-threaded), and one process per frame (`-f N`, what Flamenco does by default).
import { spawn } from 'node:child_process';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { launchBuild } from '../../blender/build-kind.js';
import { track } from './children.js';

export interface BareOptions {
  file: string;
  outDir: string;
  /** Python run before rendering (the same settings the service applies). Default none. */
  expr?: string;
  /** Render threads (`-t`). Default: Blender's (all cores). */
  threads?: number;
  /** taskset CPU list. Default: not pinned. */
  cpus?: string;
  /** Frame step of `-a` (`-j`): every `step`-th frame of the range, a sample spread over the shot. Default 1. */
  step?: number;
  /**
   * The build, as `--blender` takes it (an executable, release folder or system root), started the
   * way the service starts it (blender/build-kind.ts: a root inside bubblewrap). Default `blender` from PATH.
   */
  build?: string;
}

export interface BareRun {
  seconds: number;
  /** Seconds from the start to the end of the first frame (start, load, scene sync, first frame). */
  firstFrameEnd: number;
  /** Seconds each later frame took (between two consecutive frame ends). */
  frameSeconds: number[];
}

/** Runs `blender -b -Y FILE [-t N] [--python-expr E] -o OUT/f_#### -F PNG ARGS`, noting when each frame ends. */
async function run(o: BareOptions, args: string[]): Promise<BareRun> {
  await mkdir(o.outDir, { recursive: true });
  const argv = [
    '-b',
    '-Y',
    o.file,
    ...(o.threads ? ['-t', String(o.threads)] : []),
    ...(o.expr ? ['--python-expr', o.expr] : []),
    '-o',
    path.join(o.outDir, 'f_####'),
    '-F',
    'PNG',
    ...args,
  ];
  const launch = o.build
    ? launchBuild(o.build, argv, { write: [o.outDir], read: [path.dirname(o.file)] }, { cwd: o.outDir })
    : { command: 'blender', args: argv, env: {} };
  const [cmd, full] = o.cpus
    ? ['taskset', ['-c', o.cpus, launch.command, ...launch.args]]
    : [launch.command, launch.args];
  const t0 = performance.now();
  const ends: number[] = [];
  await new Promise<void>((resolve, reject) => {
    const child = track(
      spawn(cmd, full, { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, ...launch.env } }),
    );
    let rest = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      const lines = (rest + d).split('\n');
      rest = lines.pop() ?? '';
      for (const l of lines) if (/^ Time: /.test(l)) ends.push((performance.now() - t0) / 1000);
    });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`blender exited ${code}`))));
  });
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, firstFrameEnd: ends[0] ?? NaN, frameSeconds: ends.slice(1).map((t, i) => t - ends[i]!) };
}

/** Frames `start..end` (every `o.step`-th) in one process (`-s -e -j -a`); checks that every frame was written. */
export async function bareAnimation(o: BareOptions, start: number, end: number): Promise<BareRun> {
  const step = Math.max(1, Math.trunc(o.step ?? 1));
  const r = await run(o, ['-s', String(start), '-e', String(end), '-j', String(step), '-a']);
  const expected = Math.ceil((end - start + 1) / step);
  const written = (await readdir(o.outDir)).filter((f) => f.endsWith('.png')).length;
  if (written !== expected) throw new Error(`bare Blender wrote ${written} frames, not ${expected}`);
  return r;
}

/** Each frame in its own process (`-f N`), one after the other; total seconds. */
export async function bareProcessPerFrame(o: BareOptions, frames: readonly number[]): Promise<number> {
  let total = 0;
  for (const f of frames) total += (await run(o, ['-f', String(f)])).seconds;
  return total;
}

/** The settings the service applies for a request (resolution, samples, no denoiser), as --python-expr. */
export function settingsExpr(width: number, height: number, samples: number): string {
  return [
    'import bpy',
    's = bpy.context.scene',
    's.render.engine = "CYCLES"',
    `s.render.resolution_x = ${width}`,
    `s.render.resolution_y = ${height}`,
    's.render.resolution_percentage = 100',
    `s.cycles.samples = ${samples}`,
    's.cycles.use_denoising = False',
  ].join('; ');
}

export function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
}
