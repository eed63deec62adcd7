// A script that reads only the start of the CLI's output (`renderbridge completion bash | head -1`)
// closes the pipe early: the CLI must end quietly with its status, not print an EPIPE stack trace.
import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';

it('ends quietly when the reader closes the pipe early', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/index.ts', 'completion', 'bash'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  // The reader is gone before the CLI writes (as when `head` already exited): every write fails.
  child.stdout.destroy();
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  expect(stderr).not.toMatch(/EPIPE|Unhandled|at .*node:/);
  expect(code).toBe(0);
});
