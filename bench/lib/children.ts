// Servers under test run in child processes so the load generator (autocannon, the upload
// client) never shares their event loop. Every child is killed when the benchmark exits,
// fails or is interrupted; children also exit on their own when the IPC channel drops.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const live = new Set<ChildProcess>();
const exitHooks: (() => void)[] = [];

/** Runs `fn` (synchronous: rmSync and the like) when the process exits, whatever the reason. */
export function atExit(fn: () => void): void {
  exitHooks.push(fn);
}

function cleanUp(): void {
  for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const fn of exitHooks.splice(0)) {
    try {
      fn();
    } catch (err) {
      console.error(err);
    }
  }
}
process.once('exit', cleanUp);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  // process.exit() runs the 'exit' listener above, so signals clean up the same way.
  process.once(sig, () => process.exit(130));
}

/** Kills `child` too if this process exits first (for short-lived helpers such as cp). */
export function track(child: ChildProcess): ChildProcess {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** True when `taskset` can pin processes (Linux with util-linux). */
export function canPin(): boolean {
  return process.platform === 'linux' && spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;
}

/** Pins this process, all threads included, to `cpus` (a taskset list such as "0"). */
export function pinSelf(cpus: string): void {
  spawnSync('taskset', ['-a', '-c', '-p', cpus, String(process.pid)], { stdio: 'ignore' });
}

export interface Child<T> {
  pid: number;
  ready: T;
  /** The child itself, for IPC after its first message. */
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface StartChildOptions {
  /** taskset CPU list to pin the child to. Default: not pinned. */
  cpus?: string;
  /** Wraps the command (e.g. `ip netns exec NS`); it must exec, not fork, to keep the pid. Default none. */
  wrap?: (cmd: string, args: string[]) => [string, string[]];
}

/**
 * Starts `bench/lib/<file>` under `node --import tsx`, optionally pinned to `cpus`, and waits
 * for its first IPC message. `input` is sent to it once spawned.
 */
export async function startChild<T>(file: string, input: unknown, opts: StartChildOptions = {}): Promise<Child<T>> {
  // BENCH_CHILD_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the children: Node
  // refuses --cpu-prof in NODE_OPTIONS.
  const extra = (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const args = [...extra, '--import', 'tsx', path.join(REPO_ROOT, 'bench', 'lib', file)];
  // taskset execs node, so the pid we get is node's own: /proc/<pid> reads the server.
  const [cmd0, argv0]: [string, string[]] = opts.cpus
    ? ['taskset', ['-c', opts.cpus, process.execPath, ...args]]
    : [process.execPath, args];
  const [cmd, argv] = opts.wrap ? opts.wrap(cmd0, argv0) : [cmd0, argv0];
  const child = spawn(cmd, argv, { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  track(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await new Promise<T>((resolve, reject) => {
    child.once('message', (m) => resolve(m as T));
    child.once('error', reject);
    child.once('exit', (code, sig) => reject(new Error(`${file} exited (${code ?? sig}) before it was ready`)));
    child.send(input as object);
  });
  return {
    pid: child.pid!,
    ready,
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resident memory of a process, bytes (Linux /proc). */
export function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

/** CPU seconds a process has used so far, in user space and in the kernel (Linux /proc). */
export function cpuTimes(pid: number): { user: number; sys: number } {
  // Fields after the parenthesised command name; utime and stime are the 12th and 13th of them.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = 100; // USER_HZ is 100 on every Linux distribution Node supports
  return { user: Number(fields[11]) / ticks, sys: Number(fields[12]) / ticks };
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const t = cpuTimes(pid);
  return t.user + t.sys;
}
