// test-loop: full (packs projects on disk and reads every zip back with Python).
// What packProject puts in the zip: the scene with its relative and absolute dependencies, missing
// files reported, UDIM tiles, sequences and cache folders whole, the selected add-ons, and one file
// reached by two spellings stored once; the manifest lists each file with its size and sha256.
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { packProject } from '../../daemon/pack/pack-project.js';
import {
  DEFLATED,
  dep,
  packFailure,
  put,
  readZip,
  scratchProject,
  sha256,
  STORED,
  textBytes,
  zipMethods,
} from './pack-helpers.js';

let base: string;
let proj: string;
let main: string;
beforeEach(() => void ({ base, proj, main } = scratchProject()));
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('packProject', () => {
  it(
    'packs the scene with its relative and absolute dependencies, and the manifest lists every file with its ' +
      'real size and sha256',
    async () => {
      const wood = put(join(proj, 'tex', 'wood.png'), randomBytes(100_000));
      const notes = put(join(proj, 'shots', 'notes.txt'), textBytes(50_000));
      const hdri = put(join(base, 'library', 'hdri', 'sky.exr'), randomBytes(70_000));
      const zipPath = join(base, 'out.zip');
      const out = await packProject(
        {
          blendFile: main,
          dependencies: [
            dep({ path: '//../tex/wood.png', absolute: wood, kind: 'image', blendFile: main, usedBy: ['IMwood'] }),
            dep({ path: '//notes.txt', absolute: notes, kind: 'text', blendFile: main }),
            dep({ path: hdri, absolute: hdri, kind: 'image', blendFile: main }),
          ],
        },
        { zipPath, createdBy: 'renderbridge-daemon/test' },
      );
      const ext = `_external${join(base, 'library', 'hdri', 'sky.exr')}`;
      const read = readZip(zipPath);
      expect(read.entries.map((e) => e.name)).toEqual([
        ext,
        'shots/notes.txt',
        'shots/sh010.blend',
        'tex/wood.png',
        'renderbridge-manifest.json',
      ]);
      expect(read.manifest).toEqual(out.manifest);
      expect(out).toMatchObject({ zipPath, fileCount: 4, sceneFile: 'shots/sh010.blend', warnings: [] });
      expect(out.bytes).toBe(readFileSync(zipPath).length);
      const m = out.manifest;
      expect(m).toMatchObject({
        version: 1,
        sceneFile: 'shots/sh010.blend',
        createdBy: 'renderbridge-daemon/test',
        missing: [],
        addons: [],
      });
      expect(m.entries).toEqual(
        [
          [ext, hdri, 'image'],
          ['shots/notes.txt', notes, 'text'],
          ['shots/sh010.blend', main, 'blend'],
          ['tex/wood.png', wood, 'image'],
        ].map(([path, source, kind]) => ({
          path,
          source,
          kind,
          size: readFileSync(source!).length,
          sha256: sha256(source!),
          deflated: !/\.(png|exr)$/.test(path!),
        })),
      );
      expect(m.remaps).toEqual([{ from: hdri, to: ext, blendFile: 'shots/sh010.blend' }]);
      // Compressed images are stored, text and the uncompressed .blend deflated.
      expect(zipMethods(zipPath)).toEqual({
        [ext]: STORED,
        'shots/notes.txt': DEFLATED,
        'shots/sh010.blend': DEFLATED,
        'tex/wood.png': STORED,
        'renderbridge-manifest.json': DEFLATED,
      });
    },
  );

  it('reports missing dependencies in the manifest and a MISSING_FILES warning, and still packs the rest', async () => {
    const wood = put(join(proj, 'shots', 'wood.png'), randomBytes(1000));
    const gone = join(proj, 'shots', 'gone.png');
    const lib = join(base, 'lost', 'props.blend');
    const out = await packProject(
      {
        blendFile: main,
        dependencies: [
          dep({ path: '//wood.png', absolute: wood, kind: 'image', blendFile: main }),
          dep({ path: '//gone.png', absolute: gone, kind: 'image', blendFile: main, usedBy: ['IMgone'] }),
          dep({ path: '//gone.png', absolute: gone, kind: 'image', blendFile: main, usedBy: ['IMgone.001'] }),
          dep({ path: lib, absolute: lib, kind: 'library', blendFile: main, usedBy: ['LIprops.blend'] }),
          dep({
            path: '//seq/f_0001.png',
            absolute: join(proj, 'shots', 'seq', 'f_0001.png'),
            kind: 'image',
            pattern: 'sequence',
            blendFile: main,
          }),
        ],
      },
      { zipPath: join(base, 'out.zip') },
    );
    expect(out.manifest.missing).toEqual([
      { path: lib, resolved: lib, kind: 'library', usedBy: ['LIprops.blend'] },
      { path: '//gone.png', resolved: gone, kind: 'image', usedBy: ['IMgone', 'IMgone.001'] },
      { path: '//seq/f_0001.png', resolved: join(proj, 'shots', 'seq', 'f_0001.png'), kind: 'image', usedBy: [] },
    ]);
    expect(out.warnings.map((w) => w.code)).toEqual(['MISSING_FILES']);
    expect(out.warnings[0]!.message).toContain(gone);
    expect(out.warnings[0]!.message).toContain('1 linked library');
    expect(readZip(out.zipPath).entries.map((e) => e.name)).toEqual([
      'sh010.blend',
      'wood.png',
      'renderbridge-manifest.json',
    ]);
  });

  it('packs every UDIM tile, every frame of a sequence and everything in a cache folder', async () => {
    const tiles = [1001, 1002, 1011].map((t) => put(join(proj, 'tex', `skin.${t}.png`), randomBytes(500)));
    put(join(proj, 'tex', 'skin.png'), 'not a tile');
    const frames = [1, 2, 10].map((f) =>
      put(join(base, 'plates', `bg_${String(f).padStart(4, '0')}.exr`), randomBytes(500)),
    );
    put(join(base, 'plates', 'bg_0001.exr.bak'), 'not a frame');
    put(join(base, 'plates', 'other_0001.exr'), 'not a frame');
    const cache = join(proj, 'cache', 'fluid');
    put(join(cache, 'data', 'fluid_data_0001.vdb'), randomBytes(300));
    put(join(cache, 'mesh', 'fluid_mesh_0001.bobj.gz'), randomBytes(300));
    // A linked folder is not followed (a link cycle would never end), and the caller is told.
    symlinkSync(join(base, 'plates'), join(cache, 'linked'));
    const given = [put(join(base, 'uv', 'a.u1_v1.png'), 'x'), put(join(base, 'uv', 'a.u2_v1.png'), 'y')];
    put(join(base, 'uv', 'a.u3_v1.png'), 'not listed by the collector: left out');
    const out = await packProject(
      {
        blendFile: main,
        dependencies: [
          dep({
            path: '//../tex/skin.<UDIM>.png',
            absolute: join(proj, 'tex', 'skin.<UDIM>.png'),
            kind: 'image',
            pattern: 'udim',
            blendFile: main,
          }),
          dep({ path: frames[0]!, absolute: frames[0]!, kind: 'image', pattern: 'sequence', blendFile: main }),
          dep({ path: '//../cache/fluid/', absolute: cache, kind: 'cache', pattern: 'directory', blendFile: main }),
          dep({
            path: join(base, 'uv', 'a.<UVTILE>.png'),
            absolute: join(base, 'uv', 'a.<UVTILE>.png'),
            kind: 'image',
            pattern: 'udim',
            files: given,
            blendFile: main,
          }),
        ],
      },
      { zipPath: join(base, 'out.zip') },
    );
    const ext = (f: string) => `_external${f}`;
    expect(out.manifest.entries.map((e) => e.path)).toEqual(
      [
        ...frames.map(ext),
        ...given.map(ext),
        'cache/fluid/data/fluid_data_0001.vdb',
        'cache/fluid/mesh/fluid_mesh_0001.bobj.gz',
        'shots/sh010.blend',
        ...tiles.map((t) => `tex/${t.split('/').at(-1)}`),
      ].sort(),
    );
    expect(out.manifest.remaps).toEqual([
      { from: frames[0], to: ext(frames[0]!), blendFile: 'shots/sh010.blend' },
      {
        from: join(base, 'uv', 'a.<UVTILE>.png'),
        to: ext(join(base, 'uv', 'a.<UVTILE>.png')),
        blendFile: 'shots/sh010.blend',
      },
    ]);
    expect(out.manifest.missing).toEqual([]);
    expect(out.warnings).toEqual([
      { code: 'LINKED_FOLDER_SKIPPED', message: expect.stringContaining(join(cache, 'linked')) },
    ]);
  });

  it('bundles the selected folder and single-file add-ons (no __pycache__), leaves unselected ones out', async () => {
    const rig = join(base, 'addons', 'rigtools');
    put(join(rig, '__init__.py'), 'bl_info = {"name": "Rig Tools"}\n');
    put(join(rig, 'ops', 'snap.py'), 'def snap(): pass\n');
    put(join(rig, '__pycache__', 'snap.cpython-311.pyc'), randomBytes(100));
    const quick = put(join(base, 'addons', 'quick.py'), 'bl_info = {"name": "Quick"}\n');
    const other = put(join(base, 'addons', 'other.py'), '# not selected\n');
    const out = await packProject(
      {
        blendFile: main,
        dependencies: [],
        addons: [
          { module: 'rigtools', name: 'Rig Tools', path: rig, addonType: 'addon', selected: true },
          { module: 'quick', name: 'Quick', path: quick, addonType: 'addon', selected: true },
          { module: 'other', name: 'Other', path: other, addonType: 'addon', selected: false },
        ],
      },
      { zipPath: join(base, 'out.zip') },
    );
    expect(readZip(out.zipPath).entries.map((e) => e.name)).toEqual([
      '_addons/quick.py',
      '_addons/rigtools/__init__.py',
      '_addons/rigtools/ops/snap.py',
      'sh010.blend',
      'renderbridge-manifest.json',
    ]);
    expect(out.manifest.addons).toEqual([
      { id: 'quick', name: 'Quick', path: '_addons/quick.py', addonType: 'addon' },
      { id: 'rigtools', name: 'Rig Tools', path: '_addons/rigtools', addonType: 'addon' },
    ]);
    await packFailure(
      packProject(
        {
          blendFile: main,
          dependencies: [],
          addons: [{ module: 'gone', name: 'Gone', path: join(base, 'nope'), addonType: 'addon', selected: true }],
        },
        { zipPath: join(base, 'x.zip') },
      ),
    );
  });

  it('stores one file reached through two spellings (a link) once', async () => {
    const real = put(join(proj, 'shots', 'Wood.png'), randomBytes(100));
    const link = join(proj, 'shots', 'wood.png');
    symlinkSync(real, link);
    const out = await packProject(
      {
        blendFile: main,
        dependencies: [real, link].map((f) => dep({ path: f, absolute: f, kind: 'image', blendFile: main })),
      },
      { zipPath: join(base, 'out.zip') },
    );
    expect(out.manifest.entries.map((e) => e.path)).toEqual(['Wood.png', 'sh010.blend']);
    expect(out.manifest.remaps.map((r) => [r.from, r.to])).toEqual([
      [real, 'Wood.png'],
      [link, 'Wood.png'],
    ]);
  });
});
