// The only module that starts Blender (launched through run-launch.ts; its lines and outcome read
// by run-output.ts). Every run is headless, with user-file Python disabled
// (`-Y`), factory settings (no user add-ons or preferences leaking in) and no audio device.
// Blender runs in its own process group so that cancel, timeout and parent exit can kill it
// together with anything it started (render threads are threads, but add-ons may fork).
// `runBlender` runs one command to its end; `startBlender` keeps a process that reads commands on
// stdin (the warm render loop), with limits re-armed per piece of work.
import type { spawn } from 'node:child_process';
import type { Launch, RunAccess } from './build-kind.js';
import { BlenderCanceledError } from './errors.js';
import { launchFor, spawnChild, startError } from './run-launch.js';
import { readLines, runOutcome } from './run-output.js';
import { killGroup, RunWatch, waitGroupGone, type BlenderLimits } from './run-watch.js';

/** Flags every Blender run gets, before anything else. */
export const BLENDER_BASE_ARGS: readonly string[] = ['-b', '-Y', '--factory-startup', '-noaudio'];

/** Exit code Blender uses when the `--python` script raises (`--python-exit-code`). */
export const PYTHON_SCRIPT_EXIT_CODE = 3;

export type BlenderStream = 'stdout' | 'stderr';

export interface RunBlenderOptions {
  /**
   * The build: an executable, an unpacked release folder or a system root (see build-kind.ts).
   * Default `blender` (looked up in PATH).
   */
  binary?: string;
  /** The .blend to open. Default: none (factory scene). */
  file?: string;
  /** Arguments placed right after the file, before `--python` (e.g. `-S SCENE`, `-E CYCLES`). Default none. */
  preScriptArgs?: readonly string[];
  /** Python script run with `--python` after the file has loaded. Default none. */
  pythonScript?: string;
  /** Arguments for the script, passed after `--` (Blender ignores everything after it). Default none. */
  scriptArgs?: readonly string[];
  /**
   * Arguments after the script: `-o`, `-F`, then `-s`/`-e`/`-a` or `-f`, which must come LAST because
   * Blender renders when it reaches them. Default none.
   */
  args?: readonly string[];
  /**
   * Extra environment. Blender gets only these and an allow-list of the worker's own variables
   * (BLENDER_ENV_ALLOWED): never the farm's tokens, keys or database URLs. Default none.
   */
  env?: Record<string, string | undefined>;
  /**
   * Host folders the run needs (a build in a system root sees only these). Default: the working
   * folder writable; the scripts' folders and the file's folder readable.
   */
  access?: Partial<RunAccess>;
  /**
   * Run in the sandbox (build-kind.ts): no network, only the system and `access` visible, a private
   * /tmp, HOME in the first writable folder. Default false (the daemon traces an artist's own files;
   * the worker turns it on for every run unless its operator passed --no-sandbox).
   */
  sandbox?: boolean;
  /** Device nodes a sandboxed run may use (its GPU slot's). Default none. */
  devices?: readonly string[];
  /**
   * Added to the CPU niceness Blender starts with (`nice -n`, 1-19): a render then yields the
   * CPU to the service and the worker on the same machine, which keep answering. Default 0.
   */
  nice?: number;
  /**
   * A memory cgroup's `cgroup.procs` that Blender joins before it starts (the render slot's own:
   * the kernel then holds it to the slot's memory, and kills it, not the worker, past that). Default none.
   */
  cgroupProcs?: string;
  /** Working directory. Default: the current one. */
  cwd?: string;
  /**
   * Whole-run limit in ms; past it the group is killed and the run rejects (BlenderTimeoutError).
   * Default 6 h; 0 = none.
   */
  timeoutMs?: number;
  /** Limit in ms without any output line; catches hangs. Default 0 (off: long frames can be silent). */
  idleTimeoutMs?: number;
  /** Time between SIGTERM and SIGKILL when stopping the group. Default 5000 ms. */
  killGraceMs?: number;
  /** Cancels the run: the group is killed and the run rejects with BlenderCanceledError. */
  signal?: AbortSignal;
  /** Called for each complete output line (no trailing newline), as it arrives. Default none. */
  onLine?: (stream: BlenderStream, line: string) => void;
  /** Called once Blender is started, with its pid (also its process-group id). Default none. */
  onSpawn?: (pid: number) => void;
  /** How many last lines (both streams) to keep for error reports. Default 40. */
  lastLinesCount?: number;
}

export interface BlenderRunResult {
  /** Exit code; non-zero is returned, not thrown: the caller knows what it means for its task. */
  exitCode: number;
  /** Always null in a resolved result (deaths by signal reject). */
  signal: NodeJS.Signals | null;
  durationMs: number;
  lastLines: string[];
  /** The full argv given to Blender (without the binary), for logs and tests. */
  argv: string[];
}

/** Flags that would let a file's own Python run; refused, since uploaded files are untrusted. */
const FORBIDDEN_ARGS = new Set(['-y', '--enable-autoexec']);

/**
 * Builds Blender's argv in the order Blender needs: flags, file, pre args, script, args, `--` script
 * args. Throws on `-y`/`--enable-autoexec` before `--` (after it, arguments belong to the script).
 */
export function blenderArgv(opts: RunBlenderOptions): string[] {
  const bad = [...(opts.preScriptArgs ?? []), ...(opts.args ?? [])].find((a) => FORBIDDEN_ARGS.has(a));
  if (bad) throw new Error(`Blender argument ${bad} is not allowed: uploaded files are never trusted`);
  const argv = [...BLENDER_BASE_ARGS];
  if (opts.pythonScript) argv.push('--python-exit-code', String(PYTHON_SCRIPT_EXIT_CODE));
  if (opts.file) argv.push(opts.file);
  argv.push(...(opts.preScriptArgs ?? []));
  if (opts.pythonScript) argv.push('--python', opts.pythonScript);
  argv.push(...(opts.args ?? []));
  if (opts.scriptArgs && opts.scriptArgs.length > 0) argv.push('--', ...opts.scriptArgs);
  return argv;
}

/** Runs Blender once and waits for it. See RunBlenderOptions for defaults. */
export function runBlender(opts: RunBlenderOptions): Promise<BlenderRunResult> {
  try {
    return startBlender(opts).result;
  } catch (err) {
    return Promise.reject(err);
  }
}

/** A started Blender: lines arrive through `onLine`, `result` settles once its process group is gone. */
export interface BlenderProcess {
  /** Process (and process-group) id; undefined when the spawn failed. */
  readonly pid: number | undefined;
  readonly argv: string[];
  /**
   * Settles when Blender and its group are gone: resolves with the exit code (non-zero included),
   * rejects with BlenderCanceledError (stop), BlenderTimeoutError, BlenderCrashError or BlenderStartError.
   */
  readonly result: Promise<BlenderRunResult>;
  /** Writes one line to Blender's stdin (`stdin: true` only); false when it cannot take it any more. */
  send(line: string): boolean;
  /** The last output lines kept so far (both streams), oldest first. */
  readonly lastLines: readonly string[];
  /**
   * Replaces the limits from now on (a long-lived process arms them per piece of work, and disarms
   * them while it waits).
   */
  limit(limits: BlenderLimits): void;
  /** The limits in force now (0 = off): the start's, or the last `limit()`'s. */
  readonly limits: BlenderLimits;
  /** Kills the group (SIGTERM, SIGKILL after the grace); `result` rejects with BlenderCanceledError. */
  stop(): void;
}

/**
 * Starts Blender and returns at once. With `stdin: true` the process reads commands from a pipe
 * (a long-lived render loop); otherwise stdin is closed. The limits of `timeoutMs`/`idleTimeoutMs`
 * apply from the start until `limit()` replaces them. Throws on forbidden arguments.
 */
export function startBlender(opts: RunBlenderOptions & { stdin?: boolean }): BlenderProcess {
  const argv = blenderArgv(opts);
  const keep = opts.lastLinesCount ?? 40;
  const lastLines: string[] = [];
  const watch = new RunWatch(
    { totalMs: opts.timeoutMs ?? 6 * 3600_000, idleMs: opts.idleTimeoutMs ?? 0 },
    opts.killGraceMs ?? 5000,
  );
  const pushLine = (stream: BlenderStream, line: string) => {
    lastLines.push(line);
    if (lastLines.length > keep) lastLines.shift();
    try {
      opts.onLine?.(stream, line);
    } catch {
      // A faulty listener must not break the run or leak Blender.
    }
  };
  let child: ReturnType<typeof spawn> | undefined;
  const result = new Promise<BlenderRunResult>((resolve, reject) => {
    child = launch(opts, argv, watch, pushLine, { resolve, reject, lastLines });
  });
  return {
    get pid() {
      return watch.pid;
    },
    argv,
    result,
    lastLines,
    send: (line) => {
      const stdin = child?.stdin;
      if (!stdin || watch.settled || watch.stopReason || stdin.destroyed || !stdin.writable) return false;
      stdin.write(`${line}\n`);
      return true;
    },
    limit: (next) => {
      if (!watch.settled && !watch.stopReason) watch.arm(next);
    },
    get limits() {
      return { ...watch.limits };
    },
    stop: () => watch.stop('abort'),
  };
}

interface Settle {
  resolve: (r: BlenderRunResult) => void;
  reject: (err: Error) => void;
  lastLines: string[];
}

/** Spawns Blender in its own group and settles the run once the group is gone; undefined when it cannot start. */
function launch(
  opts: RunBlenderOptions & { stdin?: boolean },
  argv: string[],
  watch: RunWatch,
  pushLine: (stream: BlenderStream, line: string) => void,
  s: Settle,
) {
  const started = performance.now();
  if (opts.signal?.aborted) {
    watch.settled = true;
    return void s.reject(new BlenderCanceledError('canceled before Blender started'));
  }
  let how: Launch;
  try {
    how = launchFor(opts, argv);
  } catch (err) {
    watch.settled = true;
    return void s.reject(startError(opts, argv, (err as Error).message, err));
  }
  const child = spawnChild(opts, how);
  const pid = child.pid;
  watch.pid = pid;
  // A write after Blender died fails with EPIPE: the exit handling below reports what happened.
  child.stdin?.on('error', () => undefined);
  // A worker that exits (normally or through process.exit on a signal) takes Blender with it.
  const onParentExit = () => {
    if (pid !== undefined) killGroup(pid, 'SIGKILL');
  };
  const onAbort = () => watch.stop('abort');
  const cleanup = () => {
    watch.settle();
    opts.signal?.removeEventListener('abort', onAbort);
    process.removeListener('exit', onParentExit);
  };
  for (const stream of ['stdout', 'stderr'] as const) {
    const readable = child[stream];
    if (readable)
      readLines(
        readable,
        () => watch.output(),
        (line) => pushLine(stream, line),
      );
  }
  child.on('spawn', () => {
    if (pid !== undefined) opts.onSpawn?.(pid);
  });
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  process.on('exit', onParentExit);
  watch.arm(watch.limits);
  child.on('error', (err) => {
    if (watch.settled) return;
    cleanup();
    const e = err as NodeJS.ErrnoException;
    s.reject(startError(opts, argv, e.code ?? e.message, err));
  });
  child.on('exit', () => {
    // Blender is gone; anything it left in its group goes too, so no pipe stays open.
    if (pid !== undefined) killGroup(pid, 'SIGKILL');
  });
  child.on('close', (code, sig) => {
    if (watch.settled) return;
    cleanup();
    // Settle only once the group is gone, so callers (and the next attempt) never overlap with leftovers.
    void (pid === undefined ? Promise.resolve() : waitGroupGone(pid, opts.killGraceMs ?? 5000)).then(() => {
      const durationMs = Math.round(performance.now() - started);
      const outcome = runOutcome(how, code, sig, watch.stopReason, watch.limits, {
        argv,
        durationMs,
        lastLines: s.lastLines,
      });
      if (outcome instanceof Error) s.reject(outcome);
      else s.resolve(outcome);
    });
  });
  return child;
}
