// The add-on's dependency collector traced by the daemon in headless Blender (daemon/trace.ts):
// every external file of the pack fixture, its own and its linked library's, with kind, pattern,
// files, holding .blend and users; and what the tracer does without Blender, on a file Blender
// cannot open, and when the caller gives up.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CollectedDependency } from '../../shared/pack/dependencies.js';
import { DaemonError } from '../../daemon/errors.js';
import { createTracer } from '../../daemon/trace.js';
import { blenderProcesses, waitUntil } from '../helpers/e2e.js';
import { buildPackProject, type PackProject } from '../helpers/pack-fixture.js';

const BLENDER = process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender';
let work: string;
let p: PackProject;
let traced: Awaited<ReturnType<ReturnType<typeof createTracer>>>;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-collect-'));
  p = await buildPackProject(join(work, 'src'));
  traced = await createTracer({ blender: BLENDER })(p.main);
}, 180_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('dependency trace with headless Blender', () => {
  it(
    'lists every external file of the main file and of its linked library, and nothing packed, generated or ' +
      'built in',
    () => {
      const { proj, root, main, library } = p;
      const dep = (
        d: Partial<CollectedDependency> & Pick<CollectedDependency, 'path' | 'absolute' | 'usedBy'>,
      ): CollectedDependency => ({
        kind: 'image',
        pattern: 'file',
        blendFile: main,
        ...d,
      });
      const seq = [1, 2, 3, 4, 5].map((i) => join(proj, 'seq', `frame_000${i}.png`));
      const expected: CollectedDependency[] = [
        dep({
          path: join(root, 'assets', 'abs_red.png'),
          absolute: join(root, 'assets', 'abs_red.png'),
          usedBy: ['IMabs_red.png'],
        }),
        dep({
          path: '//../seq/frame_0001.png',
          absolute: seq[0]!,
          pattern: 'sequence',
          files: seq,
          usedBy: ['IMframe_0001.png'],
        }),
        dep({
          path: '//../textures/missing.png',
          absolute: join(proj, 'textures', 'missing.png'),
          usedBy: ['IMmissing.png'],
        }),
        dep({
          path: '//../textures/tile.<UDIM>.png',
          absolute: join(proj, 'textures', 'tile.<UDIM>.png'),
          pattern: 'udim',
          files: [join(proj, 'textures', 'tile.1001.png'), join(proj, 'textures', 'tile.1002.png')],
          usedBy: ['IMtile.png'],
        }),
        dep({ path: '//../textures/wood.png', absolute: join(proj, 'textures', 'wood.png'), usedBy: ['IMwood.png'] }),
        // The library's own data: `//` is the library's folder, and the library is the holding file.
        dep({
          path: join(root, 'assets', 'lib_abs.png'),
          absolute: join(root, 'assets', 'lib_abs.png'),
          blendFile: library,
          usedBy: ['IMlib_abs.png'],
        }),
        dep({
          path: '//tex/prop.png',
          absolute: join(proj, 'libs', 'tex', 'prop.png'),
          blendFile: library,
          usedBy: ['IMprop.png'],
        }),
        dep({
          path: '//../../shared/outside.png',
          absolute: join(root, 'shared', 'outside.png'),
          blendFile: library,
          usedBy: ['IMoutside.png'],
        }),
        dep({ path: library, absolute: library, kind: 'library', usedBy: ['LIprops.blend'] }),
      ];
      const byPath = (a: CollectedDependency, b: CollectedDependency) => a.path.localeCompare(b.path);
      expect([...traced.dependencies].sort(byPath)).toEqual(expected.sort(byPath));
      expect(traced.warnings).toEqual([]);
    },
  );

  it('lists the missing file too, so that the packer can report it', () => {
    const missing = traced.dependencies.find((d) => d.usedBy.includes('IMmissing.png'));
    expect(missing).toMatchObject({
      path: '//../textures/missing.png',
      absolute: join(p.proj, 'textures', 'missing.png'),
      blendFile: p.main,
    });
  });

  it('packs without external files, with BLENDER_NOT_FOUND, when the Blender binary does not exist', async () => {
    const res = await createTracer({ blender: join(work, 'no-such-blender') })(p.main);
    expect(res).toEqual({
      dependencies: [],
      warnings: [
        {
          code: 'BLENDER_NOT_FOUND',
          message:
            'Blender was not found (set RENDERBRIDGE_BLENDER or --blender): the .blend is packed without its ' +
            'external files.',
        },
      ],
    });
  });

  it('fails with PACK_FAILED naming the file when Blender cannot open it, or when it does not exist', async () => {
    const broken = join(work, 'broken.blend');
    await writeFile(broken, 'this is not a blend file');
    const tracer = createTracer({ blender: BLENDER });
    const err = await tracer(broken).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DaemonError);
    expect(err).toMatchObject({
      code: 'PACK_FAILED',
      status: 422,
      message: expect.stringMatching(/Blender cannot open broken\.blend/),
    });
    const gone = await tracer(join(work, 'gone.blend')).catch((e: unknown) => e);
    expect(gone).toMatchObject({ code: 'PACK_FAILED', message: expect.stringContaining('gone.blend') });
  });

  it('stops Blender when the signal aborts', async () => {
    const ac = new AbortController();
    const pending = createTracer({ blender: BLENDER })(p.main, { signal: ac.signal }).catch((e: unknown) => e);
    await waitUntil('Blender started', () => blenderProcesses(p.main).length > 0, {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    ac.abort(new Error('user canceled'));
    expect(await pending).toMatchObject({ message: 'user canceled' });
    expect(blenderProcesses(p.main)).toEqual([]);
  });
});
