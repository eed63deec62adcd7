// `renderbridge admin share-weight` and `share-weights`: the operator's fair-share weights, set
// through the real CLI (tsx, the current source) in a child process on a fresh data folder, and
// read back by the queue the service opens on that folder.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocalState } from '../../service/local-stack.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = ['--import', import.meta.resolve('tsx'), path.join(REPO_ROOT, 'cli/index.ts')];

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rb-share-weights-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RENDERBRIDGE_')));
  return new Promise((resolve) => {
    execFile(process.execPath, [...CLI, ...args, '--data-dir', dir], { env }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('renderbridge admin share-weight', () => {
  it(
    'sets weights the service queue reads, lists them, and refuses one that is not positive',
    { timeout: 120_000 },
    async () => {
      expect((await cli(['admin', 'create-key', '--init', '--workspace', 'studio', '--label', 'x'])).code).toBe(0);
      const set = await cli(['admin', 'share-weight', 'ws_1', '2']);
      expect(set.code, set.stderr).toBe(0);
      expect(set.stdout).toContain('Share weight of ws_1: 2');
      expect((await cli(['admin', 'share-weight', 'ws_1/alice', '0.5'])).code).toBe(0);
      const bad = await cli(['admin', 'share-weight', 'ws_2', '0']);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('a weight is a positive number');
      const listed = await cli(['admin', 'share-weights', '--json']);
      expect(JSON.parse(listed.stdout)).toEqual({ ws_1: 2, 'ws_1/alice': 0.5 });
      const state = await openLocalState(dir);
      try {
        expect(await state.queue.shareWeights()).toEqual({ ws_1: 2, 'ws_1/alice': 0.5 });
      } finally {
        await state.close();
      }
    },
  );
});
