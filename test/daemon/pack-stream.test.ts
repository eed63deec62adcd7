// test-loop: full (packs files of tens of MiB).
// How packProject runs: it streams files instead of holding them, reports progress, and on a
// failure or an abort rejects and leaves no zip behind.
import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { packProject } from '../../daemon/pack/pack-project.js';
import { dep, packFailure, put, scratchProject, textBytes } from './pack-helpers.js';

let base: string;
let proj: string;
let main: string;
beforeEach(() => void ({ base, proj, main } = scratchProject()));
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('packProject: streaming, failure and abort', () => {
  it('streams files instead of holding them: live buffers stay far below the size of a 48 MiB file', async () => {
    const big = put(join(proj, 'shots', 'plate.exr'), randomBytes(48 * 1024 * 1024));
    const mesh = put(join(proj, 'shots', 'mesh.obj'), textBytes(8 * 1024 * 1024));
    // Buffers still counted after a full collection are the ones the packer holds.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const before = process.memoryUsage().arrayBuffers;
    let peak = before;
    const progress: number[] = [];
    await packProject(
      {
        blendFile: main,
        dependencies: [big, mesh].map((f) => dep({ path: f, absolute: f, kind: 'image', blendFile: main })),
      },
      {
        zipPath: join(base, 'out.zip'),
        onProgress: (done, total) => {
          progress.push(done / total);
          if (progress.length % 4 === 0) {
            gc();
            peak = Math.max(peak, process.memoryUsage().arrayBuffers);
          }
        },
      },
    );
    expect(peak - before).toBeLessThan(12 * 1024 * 1024);
    expect(progress.at(-1)).toBe(1);
    expect(progress.length).toBeGreaterThan(50);
  });

  it(
    'fails with PACK_FAILED when the main .blend is missing or a name cannot be stored, and leaves no zip ' + 'behind',
    async () => {
      const zipPath = join(base, 'out.zip');
      expect(
        (await packFailure(packProject({ blendFile: join(proj, 'nope.blend'), dependencies: [] }, { zipPath })))
          .message,
      ).toContain('nope.blend');
      const a = put(join(proj, 'shots', 'Wood.png'), 'A');
      const b = put(join(proj, 'shots', 'wood.png'), 'B');
      const err = await packFailure(
        packProject(
          {
            blendFile: main,
            dependencies: [a, b].map((f) => dep({ path: f, absolute: f, kind: 'image', blendFile: main })),
          },
          { zipPath },
        ),
      );
      expect(err.message).toContain('letter case');
      expect(readdirSync(base)).toEqual(['proj']);
    },
  );

  it('stops on abort, rejecting with the reason and leaving no file', async () => {
    const big = put(join(proj, 'shots', 'plate.exr'), randomBytes(16 * 1024 * 1024));
    const ctl = new AbortController();
    const p = packProject(
      { blendFile: main, dependencies: [dep({ path: big, absolute: big, kind: 'image', blendFile: main })] },
      {
        zipPath: join(base, 'out.zip'),
        signal: ctl.signal,
        onProgress: (done) => done > 4 * 1024 * 1024 && ctl.abort(new Error('user canceled')),
      },
    );
    await expect(p).rejects.toThrow('user canceled');
    expect(readdirSync(base)).toEqual(['proj']);
  });
});
