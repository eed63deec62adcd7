// Runs the real `renderbridge service` command (from source through tsx) as a child process, as an
// operator starts it, and waits for its startup banner.
import { spawn, type ChildProcess } from 'node:child_process';

export interface CliService {
  child: ChildProcess;
  /** The API base URL from the banner, once the whole banner is out; rejects if the process ends first. */
  ready: Promise<string>;
  exited: Promise<number | null>;
  stderr(): string;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<number | null>;
}

/** `env` replaces the environment entirely (apart from PATH), so no setting leaks in from the machine. */
export function startCliService(args: string[], env: Record<string, string>): CliService {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/index.ts', 'service', ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      // The whole banner: its last line names the worker.
      const m = /API base URL: (\S+)[\s\S]*\n {2}worker: /.exec(err);
      if (m) resolve(m[1]!);
    });
    child.stdout.resume();
    void exited.then((code) => reject(new Error(`service exited ${code}: ${err}`)));
  });
  return {
    child,
    ready,
    exited,
    stderr: () => err,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
