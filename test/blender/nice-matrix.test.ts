// Renders yield the CPU to the service (--render-nice): on every build of the matrix (3.4 from PATH,
// 4.3 and 5.2 from their Debian roots), sandboxed as the worker runs them and not, the Blender
// process itself runs at the niceness asked for, read from its own Python.
import { mkdtemp, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBlender } from '../../blender/run.js';
import { usableBuilds } from '../helpers/blender-builds.js';

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-nice-matrix-'));
});
afterAll(() => rm(work, { recursive: true, force: true }));

describe.each(usableBuilds('niceness'))('Blender $minor', (build) => {
  it.each([true, false])(
    'runs at the niceness asked for (sandbox %s)',
    async (sandbox) => {
      const lines: string[] = [];
      const res = await runBlender({
        binary: build.path,
        cwd: work,
        sandbox,
        nice: 10,
        args: ['--python-expr', 'import os; print("NICE", os.nice(0))'],
        onLine: (_s, l) => lines.push(l),
        timeoutMs: 120_000,
      });
      expect(res.exitCode, res.lastLines.join('\n')).toBe(0);
      expect(lines.find((l) => l.startsWith('NICE'))).toBe(`NICE ${Math.min(19, os.getPriority() + 10)}`);
    },
    180_000,
  );
});
