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
import { buildPackProject, collectedDependencies, type PackProject } from '../helpers/pack-fixture.js';

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
      const byPath = (a: CollectedDependency, b: CollectedDependency) => a.path.localeCompare(b.path);
      expect([...traced.dependencies].sort(byPath)).toEqual(collectedDependencies(p).sort(byPath));
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
