// How Blender is started to render: a chunk (one process running render_setup.py, beside this
// module, then `-s/-e/-a`) or a warm render loop (render_loop.py, frames handed over one by one,
// see warm-process.ts); and where the files Blender reports as saved belong. Pure, except the
// script paths.
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { RunBlenderOptions } from '../run.js';
import { gpuNodes } from '../gpu-nodes.js';
import { scriptBeside } from '../script-path.js';
import { checkFolder, type DeviceType } from './render-settings.js';

/** render_setup.py, beside this module (see scriptBeside). */
export function renderSetupScriptPath(): string {
  return scriptBeside(import.meta.url, 'render_setup.py');
}

/** render_loop.py, beside this module. */
export function renderLoopScriptPath(): string {
  return scriptBeside(import.meta.url, 'render_loop.py');
}

/** Frames one Blender process renders: `start, start+step, ..., end` (a chunk of the job's frames). */
export interface FrameSpan {
  start: number;
  end: number;
  step: number;
}

/** Blender arguments rendering exactly these frames (they must be the last arguments). */
export function chunkArgs(chunk: FrameSpan): string[] {
  return ['-s', String(chunk.start), '-e', String(chunk.end), '-j', String(chunk.step), '-a'];
}

/** Camera output pattern under the attempt folder, as expectedFileNames' default `cameraPattern`. */
export const CAMERA_PATTERN = 'f_####';

export interface RenderInvocationOptions {
  /** Blender executable of the picked build. Default `blender` from PATH. */
  binary?: string;
  /** The .blend to render. */
  sceneFile: string;
  /** Scene selected with `-S`. Default: the file's active scene. */
  sceneName?: string;
  /** JSON file holding RenderSettings. */
  settingsFile: string;
  /** Absolute folder receiving the camera files (`-o attemptDir/f_####`); no `#`. */
  attemptDir: string;
  chunk: FrameSpan;
  /** GPUs this chunk may see, by UUID (or index): sets *_VISIBLE_DEVICES. Default: no pinning. */
  gpuUuids?: readonly string[];
  /** Device type of the render: HIP pins with HIP_VISIBLE_DEVICES, others with CUDA_VISIBLE_DEVICES. Default CUDA. */
  deviceType?: DeviceType;
  /** Render threads (`-t`), for CPU slots sharing a machine. Default: Blender's (all cores). */
  threads?: number;
  /** Camera output pattern. Default CAMERA_PATTERN. */
  cameraPattern?: string;
  /**
   * The job's folder (project, settings, outputs): the only host folder the render may write, and
   * with the scripts all a build in a system root sees. Default: run.ts's (the working folder).
   */
  jobDir?: string;
  /** Run Blender in the sandbox (see RunBlenderOptions.sandbox), with only this slot's GPU nodes. Default false. */
  sandbox?: boolean;
  /** CPU niceness added to Blender's (RunBlenderOptions.nice). Default 0. */
  nice?: number;
  /** The slot's memory cgroup Blender joins (RunBlenderOptions.cgroupProcs). Default none. */
  cgroupProcs?: string;
  /**
   * Major version of the build (`5`): 5.x needs its logger on to print progress lines. Default: assumed 5.x or later.
   */
  blenderMajor?: number;
}

export type RenderInvocation = Pick<
  RunBlenderOptions,
  | 'binary'
  | 'file'
  | 'preScriptArgs'
  | 'pythonScript'
  | 'scriptArgs'
  | 'args'
  | 'env'
  | 'access'
  | 'sandbox'
  | 'devices'
  | 'nice'
  | 'cgroupProcs'
>;

/** runBlender options rendering one chunk with render_setup.py (cwd, timeouts and listeners are the caller's). */
export function renderInvocation(opts: RenderInvocationOptions): RenderInvocation {
  const out = checkFolder('attemptDir', opts.attemptDir);
  const pattern = opts.cameraPattern ?? CAMERA_PATTERN;
  const env: Record<string, string> = {};
  if (opts.gpuUuids && opts.gpuUuids.length > 0) {
    env[opts.deviceType === 'HIP' ? 'HIP_VISIBLE_DEVICES' : 'CUDA_VISIBLE_DEVICES'] = opts.gpuUuids.join(',');
  }
  const threads = opts.threads && opts.threads > 0 ? ['-t', String(Math.trunc(opts.threads))] : [];
  return {
    binary: opts.binary ?? 'blender',
    file: opts.sceneFile,
    preScriptArgs: opts.sceneName !== undefined ? ['-S', opts.sceneName] : [],
    pythonScript: renderSetupScriptPath(),
    scriptArgs: ['--settings', opts.settingsFile],
    // -t, -o, then the chunk's -s/-e/-j/-a, which must come last.
    args: [...threads, '-o', join(out, pattern), ...chunkArgs(opts.chunk)],
    env,
    ...(opts.jobDir ? { access: { write: [opts.jobDir] } } : {}),
    ...(opts.sandbox ? { sandbox: true, devices: gpuNodes(opts.gpuUuids ?? [], opts.deviceType ?? 'CUDA') } : {}),
    ...(opts.nice ? { nice: opts.nice } : {}),
    ...(opts.cgroupProcs ? { cgroupProcs: opts.cgroupProcs } : {}),
  };
}

/**
 * Blender 5.x prints a frame's progress lines (`Fra:`, `Time:`) only for command-line renders
 * (`-a`, `-f`) unless its logger's `render` category is on; a render started from Python (the warm
 * loop) would show only `Saved:` lines. Earlier builds print the same lines with or without it.
 */
export const WARM_LOG_ARGS: readonly string[] = ['--log', 'render'];

/**
 * runBlender/startBlender options of a warm render loop: the same scene, settings, output pattern,
 * pinning and threads as a chunk, with no frames: they come one by one on stdin. `-S` and `-t` go
 * before the script, which runs until the loop ends (arguments after it would wait as long).
 */
export function warmInvocation(opts: Omit<RenderInvocationOptions, 'chunk'>): RenderInvocation {
  const chunk = renderInvocation({ ...opts, chunk: { start: 0, end: 0, step: 1 } });
  const threads = opts.threads && opts.threads > 0 ? ['-t', String(Math.trunc(opts.threads))] : [];
  const out = checkFolder('attemptDir', opts.attemptDir);
  return {
    ...chunk,
    // Only where needed: on 4.x the render category's logging adds lines the worker would read for nothing.
    preScriptArgs: [
      ...(chunk.preScriptArgs ?? []),
      ...threads,
      ...((opts.blenderMajor ?? 5) >= 5 ? WARM_LOG_ARGS : []),
    ],
    pythonScript: renderLoopScriptPath(),
    scriptArgs: ['--settings', opts.settingsFile, '--output', join(out, opts.cameraPattern ?? CAMERA_PATTERN)],
    args: [],
  };
}

export interface SavedPath {
  kind: 'camera' | 'composite';
  /** `/`-separated, relative to attemptDir (camera) or compositeDir (composite: `<node folder>/<file>`). */
  relativePath: string;
}

function inside(dir: string, file: string): string | undefined {
  const rel = relative(dir, file);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined;
  return rel.split(sep).join('/');
}

/**
 * Where a file Blender reported as saved belongs. compositeDir is checked first, so it may lie
 * inside attemptDir. Throws for a path outside both: Blender wrote somewhere it must not.
 */
export function classifySavedPath(absPath: string, dirs: { attemptDir: string; compositeDir: string }): SavedPath {
  const file = resolve(absPath);
  const comp = inside(resolve(dirs.compositeDir), file);
  if (comp !== undefined) return { kind: 'composite', relativePath: comp };
  const cam = inside(resolve(dirs.attemptDir), file);
  if (cam !== undefined) return { kind: 'camera', relativePath: cam };
  throw new Error(`saved file outside the attempt folders: ${absPath}`);
}
