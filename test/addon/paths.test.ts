// Runs the plain-python unit tests of the add-on's bpy-free path helpers (test_paths.py).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('host-addon/renderbridge/paths.py', () => {
  it('passes its python unit tests', async () => {
    const script = fileURLToPath(new URL('./test_paths.py', import.meta.url));
    const { stderr } = await run('python3', [script, '-v'], { timeout: 60_000 }).catch((err: { stderr?: string; stdout?: string }) => {
      throw new Error(`python tests failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    });
    expect(stderr).toMatch(/\nOK\s*$/);
    expect(stderr).toMatch(/Ran (\d+) tests/);
  });
});
