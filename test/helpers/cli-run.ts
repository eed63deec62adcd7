// Runs the real `renderbridge` CLI (from source through tsx) as a subprocess with a given
// environment and optional stdin, as a script or a person at a shell would.
import { spawn } from 'node:child_process';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `env` replaces the environment entirely (apart from PATH), so no setting leaks in from the machine. */
export function runCli(args: string[], env: Record<string, string | undefined>, stdin?: string): Promise<CliRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/index.ts', ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.on('error', () => {});
  child.stdin.end(stdin ?? '');
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}
