// The only module that starts Blender. Every run is headless, with user-file Python disabled
// (`-Y`), factory settings (no user add-ons or preferences leaking in) and no audio device.
// Blender runs in its own process group so that cancel, timeout and parent exit can kill it
// together with anything it started (render threads are threads, but add-ons may fork).
// `runBlender` runs one command to its end; `startBlender` keeps a process that reads commands on
// stdin (the warm render loop), with limits re-armed per piece of work.
import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { BlenderCanceledError, BlenderCrashError, BlenderStartError, BlenderTimeoutError } from './errors.js';

/** Flags every Blender run gets, before anything else. */
export const BLENDER_BASE_ARGS: readonly string[] = ['-b', '-Y', '--factory-startup', '-noaudio'];

/** Exit code Blender uses when the `--python` script raises (`--python-exit-code`). */
export const PYTHON_SCRIPT_EXIT_CODE = 3;

export type BlenderStream = 'stdout' | 'stderr';

export interface RunBlenderOptions {
  /** Blender executable. Default `blender` (looked up in PATH). */
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
  /** Extra environment, merged over `process.env`. Default none. */
  env?: Record<string, string | undefined>;
  /** Working directory. Default: the current one. */
  cwd?: string;
  /** Whole-run limit in ms; past it the group is killed and the run rejects (BlenderTimeoutError). Default 6 h; 0 = none. */
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

/** Longest line kept; a runaway line without newline is cut rather than buffered forever. */
const MAX_LINE_CHARS = 16_384;

/** Sends a signal to a whole process group; false when the group no longer exists. */
function killGroup(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Runs Blender once and waits for it. See RunBlenderOptions for defaults. */
export function runBlender(opts: RunBlenderOptions): Promise<BlenderRunResult> {
  try {
    return startBlender(opts).result;
  } catch (err) {
    return Promise.reject(err);
  }
}

/** Limits of a long-lived process's current piece of work (0 = off). */
export interface BlenderLimits {
  /** From now, the most the work may take before the group is killed (BlenderTimeoutError, reason `timeout`). */
  totalMs: number;
  /** The most time without an output line (BlenderTimeoutError, reason `idle`). */
  idleMs: number;
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
  /** Replaces the limits from now on (a long-lived process arms them per piece of work, and disarms them while it waits). */
  limit(limits: BlenderLimits): void;
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
  const graceMs = opts.killGraceMs ?? 5000;
  const lastLines: string[] = [];
  const started = performance.now();
  let limits: BlenderLimits = { totalMs: opts.timeoutMs ?? 6 * 3600_000, idleMs: opts.idleTimeoutMs ?? 0 };
  let stopReason: 'timeout' | 'idle' | 'abort' | undefined;
  let settled = false;
  let totalTimer: NodeJS.Timeout | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  let child: ReturnType<typeof spawn> | undefined;
  let pid: number | undefined;

  const stop = (reason: 'timeout' | 'idle' | 'abort') => {
    if (stopReason || settled) return;
    stopReason = reason;
    if (pid === undefined) return;
    killGroup(pid, 'SIGTERM');
    killTimer = setTimeout(() => killGroup(pid!, 'SIGKILL'), graceMs);
  };
  // Output comes a line at a time, thousands per job: each one only notes the time, and one timer
  // checks it when it is due (re-arming a timer per line cost more than parsing the line).
  let lastOutputAt = performance.now();
  const checkIdle = () => {
    idleTimer = undefined;
    if (limits.idleMs <= 0 || stopReason || settled) return;
    const left = lastOutputAt + limits.idleMs - performance.now();
    if (left <= 0) stop('idle');
    else idleTimer = setTimeout(checkIdle, left);
  };
  const armIdle = () => {
    lastOutputAt = performance.now();
    if (!idleTimer && limits.idleMs > 0 && !stopReason && !settled) idleTimer = setTimeout(checkIdle, limits.idleMs);
  };
  const arm = (next: BlenderLimits) => {
    limits = next;
    clearTimeout(totalTimer);
    totalTimer = next.totalMs > 0 && !settled ? setTimeout(() => stop('timeout'), next.totalMs) : undefined;
    // New limits count from now.
    clearTimeout(idleTimer);
    idleTimer = undefined;
    armIdle();
  };

  const result = new Promise<BlenderRunResult>((resolve, reject) => {
    if (opts.signal?.aborted) {
      settled = true;
      reject(new BlenderCanceledError('canceled before Blender started'));
      return;
    }
    child = spawn(opts.binary ?? 'blender', argv, {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      detached: true,
      stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    pid = child.pid;
    // A write after Blender died fails with EPIPE: the exit handling below reports what happened.
    child.stdin?.on('error', () => undefined);
    // A worker that exits (normally or through process.exit on a signal) takes Blender with it.
    const onParentExit = () => {
      if (pid !== undefined) killGroup(pid, 'SIGKILL');
    };
    const onAbort = () => stop('abort');

    const cleanup = () => {
      settled = true;
      clearTimeout(totalTimer);
      clearTimeout(idleTimer);
      clearTimeout(killTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      process.removeListener('exit', onParentExit);
    };

    const pushLine = (stream: BlenderStream, line: string) => {
      lastLines.push(line);
      if (lastLines.length > keep) lastLines.shift();
      try {
        opts.onLine?.(stream, line);
      } catch {
        // A faulty listener must not break the run or leak Blender.
      }
    };
    const attach = (stream: BlenderStream, readable: NodeJS.ReadableStream) => {
      const decoder = new StringDecoder('utf8');
      let pending = '';
      readable.on('data', (chunk: Buffer) => {
        armIdle();
        pending += decoder.write(chunk);
        let start = 0;
        for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n', start)) {
          pushLine(stream, pending.slice(start, nl).replace(/\r$/, ''));
          start = nl + 1;
        }
        pending = pending.slice(start);
        if (pending.length > MAX_LINE_CHARS) {
          pushLine(stream, pending.slice(0, MAX_LINE_CHARS));
          pending = '';
        }
      });
      readable.on('end', () => {
        pending += decoder.end();
        if (pending) pushLine(stream, pending.replace(/\r$/, ''));
        pending = '';
      });
    };
    if (child.stdout) attach('stdout', child.stdout);
    if (child.stderr) attach('stderr', child.stderr);

    child.on('spawn', () => {
      if (pid !== undefined) opts.onSpawn?.(pid);
    });
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    process.on('exit', onParentExit);
    arm(limits);

    child.on('error', (err) => {
      if (settled) return;
      cleanup();
      const e = err as NodeJS.ErrnoException;
      reject(
        new BlenderStartError(`cannot start Blender (${opts.binary ?? 'blender'}): ${e.code ?? e.message}`, { argv }, { cause: err }),
      );
    });
    child.on('exit', () => {
      // Blender is gone; anything it left in its group goes too, so no pipe stays open.
      if (pid !== undefined) killGroup(pid, 'SIGKILL');
    });
    child.on('close', (code, sig) => {
      if (settled) return;
      cleanup();
      // Settle only once the group is gone, so callers (and the next attempt) never overlap with leftovers.
      void (pid === undefined ? Promise.resolve() : waitGroupGone(pid, graceMs)).then(() => finish(code, sig));
    });
    const finish = (code: number | null, sig: NodeJS.Signals | null) => {
      const durationMs = Math.round(performance.now() - started);
      const details = { argv, exitCode: code, signal: sig, durationMs, lastLines };
      if (stopReason === 'abort') {
        reject(new BlenderCanceledError('Blender stopped: task canceled'));
      } else if (stopReason === 'timeout') {
        reject(new BlenderTimeoutError(`Blender timed out after ${limits.totalMs} ms`, { ...details, reason: 'timeout' }));
      } else if (stopReason === 'idle') {
        reject(new BlenderTimeoutError(`Blender printed nothing for ${limits.idleMs} ms`, { ...details, reason: 'idle' }));
      } else if (sig) {
        reject(new BlenderCrashError(`Blender crashed (${sig})`, { ...details, reason: 'crash' }));
      } else {
        resolve({ exitCode: code ?? -1, signal: null, durationMs, lastLines, argv });
      }
    };
  });

  return {
    get pid() {
      return pid;
    },
    argv,
    result,
    lastLines,
    send: (line) => {
      const stdin = child?.stdin;
      if (!stdin || settled || stopReason || stdin.destroyed || !stdin.writable) return false;
      stdin.write(`${line}\n`);
      return true;
    },
    limit: (next) => {
      if (!settled && !stopReason) arm(next);
    },
    stop: () => stop('abort'),
  };
}

/**
 * SIGKILLs the group until no member is left (killed members linger as zombies until init reaps
 * them), for at most `maxMs`.
 */
async function waitGroupGone(pid: number, maxMs: number): Promise<void> {
  const deadline = Date.now() + Math.max(maxMs, 200);
  while (killGroup(pid, 'SIGKILL') && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
}
