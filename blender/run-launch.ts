// How a Blender run is launched: the command (a bare name from PATH, or a build of any kind,
// sandboxed or not: build-kind.ts), the allow-listed environment, nice, and a process group of its
// own. The run itself (argv, limits, lines, outcome) is run.ts's.
import { spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { findInPath, launchBuild, scriptFolders, type Launch, type RunAccess } from './build-kind.js';
import { BlenderStartError } from './errors.js';
import type { RunBlenderOptions } from './run.js';

/**
 * Variables of the worker's environment Blender may see: locale, time zone, PATH, HOME and temp
 * folders, and the GPU runtimes' own settings. Everything else (the worker token, S3 keys,
 * DATABASE_URL, REDIS_URL) stays out: the file's Python and its add-ons run inside Blender.
 */
export const BLENDER_ENV_ALLOWED: readonly (string | RegExp)[] = [
  'PATH',
  'HOME',
  'USER',
  'LANG',
  'LANGUAGE',
  /^LC_/,
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  'OCIO',
  /^(CUDA|HIP|ROCR|GPU_DEVICE|NVIDIA|__GL|__NV)_/,
  'XDG_RUNTIME_DIR',
];

/** The allow-listed part of an environment. */
export function blenderEnv(from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(from)) {
    if (v !== undefined && BLENDER_ENV_ALLOWED.some((a) => (typeof a === 'string' ? a === k : a.test(k)))) out[k] = v;
  }
  return out;
}

/** The command for a run: a bare name (`blender`) is looked up in PATH; a path is a build of any kind. */
export function launchFor(opts: RunBlenderOptions, argv: string[]): Launch {
  const name = opts.binary ?? 'blender';
  if (!name.includes('/') && !opts.sandbox) return { command: name, args: argv, env: {} };
  const binary = name.includes('/') ? name : findInPath(name, process.env.PATH);
  if (!binary) throw new Error(`${name} is not in PATH`);
  const cwd = opts.cwd ?? process.cwd();
  const access: RunAccess = {
    write: opts.access?.write ?? [cwd],
    read: opts.access?.read ?? [
      ...(opts.pythonScript ? scriptFolders(opts.pythonScript) : []),
      ...(opts.file ? [dirname(opts.file)] : []),
    ],
  };
  return launchBuild(binary, argv, access, {
    cwd,
    ...(opts.sandbox ? { sandbox: true, devices: opts.devices ?? [] } : {}),
  });
}

/** A BlenderStartError naming the build, with `why` it could not start. */
export function startError(opts: RunBlenderOptions, argv: string[], why: string, cause: unknown) {
  return new BlenderStartError(`cannot start Blender (${opts.binary ?? 'blender'}): ${why}`, { argv }, { cause });
}

/** Blender (or its sandbox) in a process group of its own, so a stop takes everything it started. */
export function spawnChild(opts: RunBlenderOptions & { stdin?: boolean }, how: Launch) {
  // nice execs Blender (or bwrap) in place: the pid and its process group stay the run's own.
  const nice = opts.nice && opts.nice > 0 ? Math.min(19, Math.trunc(opts.nice)) : 0;
  let [command, args] = nice ? ['nice', ['-n', String(nice), how.command, ...how.args]] : [how.command, how.args];
  // The shell joins the cgroup, then execs: Blender starts inside it, with no moment outside.
  if (opts.cgroupProcs)
    [command, args] = ['sh', ['-c', 'echo $$ > "$0" && exec "$@"', opts.cgroupProcs, command, ...args]];
  return spawn(command, args, {
    cwd: opts.cwd,
    env: { ...blenderEnv(), ...how.env, ...opts.env },
    detached: true,
    stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
}
