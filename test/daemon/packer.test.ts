// The packer on disk: packFolder's choices, and createPacker with the real tracer (headless
// Blender running blender/trace/trace_deps.py) on a .blend built by build_textured.py.
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { packFolder } from '../../daemon/pack/pack-project.js';
import { createPacker } from '../../daemon/pack/packer.js';
import type { TraceFn } from '../../daemon/ports.js';
import { createTracer } from '../../daemon/trace.js';
import { runBlender } from '../../blender/run.js';
import type { DaemonError } from '../../daemon/errors.js';
import { put, readZip, textBytes, packFailure } from './pack-helpers.js';

const BLENDER = process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender';
const BUILDER = fileURLToPath(new URL('../fixtures/blend/build_textured.py', import.meta.url));
/** A real .blend whose cube samples '//../tex/wood.png' (built once per file, copied into each project). */
let textured: string;
let builtIn: string;

beforeAll(async () => {
  builtIn = mkdtempSync(join(tmpdir(), 'rb-packer-blend-'));
  textured = join(builtIn, 'sh010.blend');
  const res = await runBlender({
    binary: BLENDER,
    pythonScript: BUILDER,
    scriptArgs: [textured, '//../tex/wood.png'],
    timeoutMs: 120_000,
  });
  if (res.exitCode !== 0)
    throw new Error(`building textured.blend failed (exit ${res.exitCode}):\n${res.lastLines.join('\n')}`);
}, 150_000);
afterAll(() => rmSync(builtIn, { recursive: true, force: true }));

let base: string;
let proj: string;
let main: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'rb-packer-'));
  proj = join(base, 'proj');
  main = put(join(proj, 'shots', 'sh010.blend'), Buffer.concat([Buffer.from('BLENDER-v304'), textBytes(200_000)]));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('packFolder', () => {
  beforeEach(() => {
    put(join(proj, 'shots', 'sh010.blend1'), 'backup');
    put(join(proj, 'tex', 'wood.png'), randomBytes(100));
    put(join(proj, 'tools', '__pycache__', 'x.pyc'), randomBytes(10));
    put(join(proj, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    put(join(proj, 'renderbridge-manifest.json'), '{"stale": true}');
  });

  it('packs every file of the folder where it is, skipping backups, bytecode, .git and an old manifest', async () => {
    const out = await packFolder(proj, { zipPath: join(base, 'out.zip') });
    expect(readZip(out.zipPath).entries.map((e) => e.name)).toEqual([
      'shots/sh010.blend',
      'tex/wood.png',
      'renderbridge-manifest.json',
    ]);
    expect(out.sceneFile).toBe('shots/sh010.blend');
    expect(out.manifest).toMatchObject({ sceneFile: 'shots/sh010.blend', remaps: [], missing: [] });
    expect(out.manifest.entries.map((e) => e.kind)).toEqual(['blend', 'image']);
    expect(out.warnings.map((w) => w.code)).toEqual(['FILE_SKIPPED']);
  });

  it('prefers the only top-level .blend, takes sceneFile when given, lists the choices if it cannot tell', async () => {
    put(join(proj, 'libs', 'props.blend'), 'BLENDER-v304');
    expect((await packFailure(packFolder(proj, { zipPath: join(base, 'a.zip') }))).metadata.choices).toEqual([
      'libs/props.blend',
      'shots/sh010.blend',
    ]);
    expect((await packFolder(proj, { zipPath: join(base, 'b.zip'), sceneFile: 'shots/sh010.blend' })).sceneFile).toBe(
      'shots/sh010.blend',
    );
    await packFailure(packFolder(proj, { zipPath: join(base, 'c.zip'), sceneFile: 'shots/sh010.blend1' }));
    put(join(proj, 'main.blend'), 'BLENDER-v304');
    expect((await packFolder(proj, { zipPath: join(base, 'd.zip') })).sceneFile).toBe('main.blend');
  });
});

describe('createPacker', () => {
  let workDir: string;
  const traced: string[] = [];
  const realTrace = createTracer({ blender: BLENDER });
  // The real tracer, with its calls recorded (a packer given the dependencies must not trace).
  const trace: TraceFn = (blendFile, options) => {
    traced.push(blendFile);
    return realTrace(blendFile, options);
  };
  beforeEach(() => {
    workDir = join(base, 'packs');
    traced.length = 0;
    copyFileSync(textured, main);
    put(join(proj, 'tex', 'wood.png'), randomBytes(100));
  });

  it(
    'packs a .blend with the dependencies given, or traces them, hashing its files; zip() writes <packId>.zip ' +
      'on demand',
    async () => {
      const packer = createPacker({ workDir, trace, createdBy: 'renderbridge-daemon/test' });
      const given = await packer.pack({ path: main, dependencies: [] });
      expect(traced).toEqual([]);
      expect(given.zipPath).toBeNull();
      expect(given).toMatchObject({ fileCount: 1, sceneFile: 'sh010.blend', missing: [], remaps: [], warnings: [] });
      expect(given.files.map((f) => f.path)).toEqual(['sh010.blend', 'renderbridge-manifest.json']);
      expect(given.preflight).toEqual({
        schemaVersion: 1,
        source: 'client_zip_inspection',
        blendFiles: ['sh010.blend'],
        packerManifestPreview: { manifestPath: 'renderbridge-manifest.json', bundledAddons: [] },
      });
      const viaTrace = await packer.pack({ path: main });
      expect(traced).toEqual([main]);
      // Blender found '//../tex/wood.png': packed beside shots/, the project rooted at proj/.
      expect(viaTrace).toMatchObject({
        zipPath: null,
        fileCount: 2,
        sceneFile: 'shots/sh010.blend',
        missing: [],
        remaps: [],
        warnings: [],
      });
      expect(viaTrace.files.map((f) => f.path)).toEqual([
        'shots/sh010.blend',
        'tex/wood.png',
        'renderbridge-manifest.json',
      ]);
      const zipPath = await packer.zip(viaTrace.packId);
      expect(zipPath).toBe(join(workDir, `${viaTrace.packId}.zip`));
      expect(readZip(zipPath).entries.map((e) => e.name)).toEqual([
        'shots/sh010.blend',
        'tex/wood.png',
        'renderbridge-manifest.json',
      ]);
      expect(readZip(zipPath).manifest?.createdBy).toBe('renderbridge-daemon/test');
      expect(packer.get(viaTrace.packId)).toEqual({ ...viaTrace, zipPath });
      // Each pack has its folder (the manifest); the zip only where one was asked for.
      expect(readdirSync(workDir).sort()).toEqual([given.packId, viaTrace.packId, `${viaTrace.packId}.zip`].sort());
      await packer.discard(viaTrace.packId);
      expect(readdirSync(workDir)).toEqual([given.packId]);
      expect(packer.get(viaTrace.packId)).toBeUndefined();
    },
  );

  it('packs a folder, inspects a .zip without repacking it, and never deletes a user zip', async () => {
    const packer = createPacker({ workDir, trace, createdBy: 'test' });
    const folder = await packer.pack({ path: proj });
    expect(folder).toMatchObject({ fileCount: 2, sceneFile: 'shots/sh010.blend' });
    const own = join(base, 'mine.zip');
    writeFileSync(own, readFileSync(await packer.zip(folder.packId)));
    const zip = await packer.pack({ path: own });
    expect(zip).toMatchObject({
      zipPath: own,
      files: [],
      bytes: readFileSync(own).length,
      fileCount: 2,
      sceneFile: 'shots/sh010.blend',
      preflight: folder.preflight,
    });
    expect(await packer.zip(zip.packId)).toBe(own);
    await packer.discard(zip.packId);
    expect(readFileSync(own).length).toBe(zip.bytes);
  });

  it('answers PACK_FAILED for a missing path, another kind of file, or a missing main .blend', async () => {
    const packer = createPacker({ workDir, trace, createdBy: 'test' });
    expect((await packFailure(packer.pack({ path: join(base, 'nope.blend') }))).message).toContain('nope.blend');
    const txt = put(join(base, 'notes.txt'), 'x');
    expect((await packFailure(packer.pack({ path: txt }))).message).toContain('not a .blend');
    mkdirSync(workDir, { recursive: true });
    expect(readdirSync(workDir)).toEqual([]);
    expect(
      await packer.zip('no-such-pack').then(
        () => null,
        (e: DaemonError) => e.code,
      ),
    ).toBe('DAEMON_NOT_FOUND');
  });
});
