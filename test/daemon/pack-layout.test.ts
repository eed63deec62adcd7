// The packer's layout (planLayout): which archive path each dependency and add-on gets, and the
// remaps that make the scene find them there; the same whatever order the dependencies come in.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planLayout, type ExpandedAddon } from '../../daemon/pack/layout.js';
import { dep, found, layoutFailure } from './pack-helpers.js';

const MAIN = '/home/ann/proj/shots/sh010.blend';

describe('planLayout', () => {
  it(
    'keeps files under the root in place, mirrors the others under _external/, and remaps what does not ' +
      'resolve by itself',
    () => {
      const lib = '/mnt/assets/props/props.blend';
      const layout = planLayout(
        MAIN,
        [
          found({ path: '//../tex/wood.png', absolute: '/home/ann/proj/tex/wood.png', kind: 'image', blendFile: MAIN }),
          // Absolute, although inside the root: remapped all the same.
          found({
            path: '/home/ann/proj/tex/oak.png',
            absolute: '/home/ann/proj/tex/oak.png',
            kind: 'image',
            blendFile: MAIN,
          }),
          found({ path: lib, absolute: lib, kind: 'library', blendFile: MAIN }),
          // The library's own relative texture: mirrored beside it, so its // path still resolves.
          found({ path: '//tex/rock.png', absolute: '/mnt/assets/props/tex/rock.png', kind: 'image', blendFile: lib }),
          // Mirroring keeps the library's relative path to another external file working...
          found({ path: '//../../../srv/hdri.exr', absolute: '/srv/hdri.exr', kind: 'image', blendFile: lib }),
          // ...but not one with more '..' than folders (the OS stops at '/', the archive does not).
          found({ path: '//../../../../srv/sky.exr', absolute: '/srv/sky.exr', kind: 'image', blendFile: lib }),
        ],
        [],
        { pathApi: path.posix },
      );
      expect(layout.root).toBe('/home/ann/proj');
      expect(layout.sceneFile).toBe('shots/sh010.blend');
      expect(layout.entries.map((e) => [e.path, e.source, e.kind])).toEqual([
        ['_external/mnt/assets/props/props.blend', lib, 'library'],
        ['_external/mnt/assets/props/tex/rock.png', '/mnt/assets/props/tex/rock.png', 'image'],
        ['_external/srv/hdri.exr', '/srv/hdri.exr', 'image'],
        ['_external/srv/sky.exr', '/srv/sky.exr', 'image'],
        ['shots/sh010.blend', MAIN, 'blend'],
        ['tex/oak.png', '/home/ann/proj/tex/oak.png', 'image'],
        ['tex/wood.png', '/home/ann/proj/tex/wood.png', 'image'],
      ]);
      expect(layout.remaps).toEqual([
        {
          from: '//../../../../srv/sky.exr',
          to: '_external/srv/sky.exr',
          blendFile: '_external/mnt/assets/props/props.blend',
        },
        { from: '/home/ann/proj/tex/oak.png', to: 'tex/oak.png', blendFile: 'shots/sh010.blend' },
        { from: lib, to: '_external/mnt/assets/props/props.blend', blendFile: 'shots/sh010.blend' },
      ]);
    },
  );

  it('places Windows drives and UNC shares deterministically and remaps them', () => {
    const main = 'C:\\proj\\scene.blend';
    const layout = planLayout(
      main,
      [
        found({ path: '//tex\\a.png', absolute: 'C:\\proj\\tex\\a.png', kind: 'image', blendFile: main }),
        found({ path: 'D:\\lib\\b.png', absolute: 'D:\\lib\\b.png', kind: 'image', blendFile: main }),
        found({ path: '\\\\nas\\share\\c.png', absolute: '\\\\nas\\share\\c.png', kind: 'image', blendFile: main }),
      ],
      [],
      { pathApi: path.win32 },
    );
    expect(layout.entries.map((e) => e.path)).toEqual([
      '_external/D/lib/b.png',
      '_external/UNC/nas/share/c.png',
      'scene.blend',
      'tex/a.png',
    ]);
    expect(layout.remaps).toEqual([
      { from: 'D:\\lib\\b.png', to: '_external/D/lib/b.png', blendFile: 'scene.blend' },
      { from: '\\\\nas\\share\\c.png', to: '_external/UNC/nas/share/c.png', blendFile: 'scene.blend' },
    ]);
  });

  it('keeps the <UDIM> token, names one frame of a sequence and the folder of a cache in remaps', () => {
    const tiles = ['/mnt/t/skin.1001.png', '/mnt/t/skin.1002.png'];
    const frames = ['/mnt/seq/f_0001.png', '/mnt/seq/f_0002.png'];
    const layout = planLayout(
      MAIN,
      [
        found(
          {
            path: '/mnt/t/skin.<UDIM>.png',
            absolute: '/mnt/t/skin.<UDIM>.png',
            kind: 'image',
            pattern: 'udim',
            blendFile: MAIN,
          },
          tiles,
        ),
        found(
          {
            path: '/mnt/seq/f_0001.png',
            absolute: '/mnt/seq/f_0001.png',
            kind: 'image',
            pattern: 'sequence',
            blendFile: MAIN,
          },
          frames,
        ),
        found({ path: '/mnt/cache/', absolute: '/mnt/cache', kind: 'cache', pattern: 'directory', blendFile: MAIN }, [
          '/mnt/cache/a/1.vdb',
        ]),
        // Relative and where it leads: no remap.
        found(
          {
            path: '//tex/skin.<UDIM>.png',
            absolute: '/home/ann/proj/shots/tex/skin.<UDIM>.png',
            kind: 'image',
            pattern: 'udim',
            blendFile: MAIN,
          },
          ['/home/ann/proj/shots/tex/skin.1001.png'],
        ),
      ],
      [],
      { pathApi: path.posix },
    );
    expect(layout.entries.map((e) => e.path)).toEqual([
      '_external/mnt/cache/a/1.vdb',
      '_external/mnt/seq/f_0001.png',
      '_external/mnt/seq/f_0002.png',
      '_external/mnt/t/skin.1001.png',
      '_external/mnt/t/skin.1002.png',
      'sh010.blend',
      'tex/skin.1001.png',
    ]);
    expect(layout.remaps.map((r) => [r.from, r.to])).toEqual([
      ['/mnt/cache/', '_external/mnt/cache'],
      ['/mnt/seq/f_0001.png', '_external/mnt/seq/f_0001.png'],
      ['/mnt/t/skin.<UDIM>.png', '_external/mnt/t/skin.<UDIM>.png'],
    ]);
  });

  it('remaps a // path whose text does not lead to the file (different letter case)', () => {
    const layout = planLayout(
      MAIN,
      [
        found({
          path: '//Tex/Wood.png',
          absolute: '/home/ann/proj/shots/tex/wood.png',
          kind: 'image',
          blendFile: MAIN,
        }),
      ],
      [],
      {
        pathApi: path.posix,
      },
    );
    expect(layout.remaps).toEqual([{ from: '//Tex/Wood.png', to: 'tex/wood.png', blendFile: 'sh010.blend' }]);
  });

  it('packs a file used by several data blocks once, and merges their usedBy in missing files', () => {
    const wood = '/home/ann/proj/shots/wood.png';
    const gone = '/home/ann/proj/shots/gone.png';
    const layout = planLayout(
      MAIN,
      [
        found({ path: '//wood.png', absolute: wood, kind: 'image', blendFile: MAIN, usedBy: ['IMwood'] }),
        found({ path: '//wood.png', absolute: wood, kind: 'image', blendFile: MAIN, usedBy: ['IMwood.001'] }),
        {
          dep: dep({ path: '//gone.png', absolute: gone, kind: 'image', blendFile: MAIN, usedBy: ['IMb'] }),
          files: [],
          missing: [gone],
        },
        {
          dep: dep({ path: '//gone.png', absolute: gone, kind: 'image', blendFile: MAIN, usedBy: ['IMa', 'IMb'] }),
          files: [],
          missing: [gone],
        },
      ],
      [],
      { pathApi: path.posix },
    );
    expect(layout.entries.map((e) => e.path)).toEqual(['sh010.blend', 'wood.png']);
    expect(layout.missing).toEqual([{ path: '//gone.png', resolved: gone, kind: 'image', usedBy: ['IMa', 'IMb'] }]);
  });

  it('gives the same layout whatever the order of the dependencies', () => {
    const deps = [
      found({ path: '/mnt/b.png', absolute: '/mnt/b.png', kind: 'image', blendFile: MAIN }),
      found({ path: '//a.png', absolute: '/home/ann/proj/shots/a.png', kind: 'image', blendFile: MAIN }),
      found({ path: '/srv/c.png', absolute: '/srv/c.png', kind: 'image', blendFile: MAIN }),
    ];
    const a = planLayout(MAIN, deps, [], { pathApi: path.posix });
    const b = planLayout(MAIN, [...deps].reverse(), [], { pathApi: path.posix });
    expect(b).toEqual(a);
  });

  it('bundles folder add-ons under _addons/<module>/ and single-file ones as _addons/<module>.py', () => {
    const addons: ExpandedAddon[] = [
      {
        addon: {
          module: 'rigtools',
          name: 'Rig Tools',
          path: '/home/ann/addons/rigtools',
          addonType: 'addon',
          selected: true,
        },
        single: false,
        files: ['/home/ann/addons/rigtools/__init__.py', '/home/ann/addons/rigtools/ops/a.py'],
      },
      {
        addon: {
          module: 'quick',
          name: 'Quick',
          path: '/home/ann/addons/quick.py',
          addonType: 'addon',
          selected: true,
        },
        single: true,
        files: [],
      },
    ];
    const layout = planLayout(MAIN, [], addons, { pathApi: path.posix });
    expect(layout.entries.map((e) => [e.path, e.kind])).toEqual([
      ['_addons/quick.py', 'addon'],
      ['_addons/rigtools/__init__.py', 'addon'],
      ['_addons/rigtools/ops/a.py', 'addon'],
      ['sh010.blend', 'blend'],
    ]);
    expect(layout.addons).toEqual([
      { id: 'quick', name: 'Quick', path: '_addons/quick.py', addonType: 'addon' },
      { id: 'rigtools', name: 'Rig Tools', path: '_addons/rigtools', addonType: 'addon' },
    ]);
    layoutFailure(() =>
      planLayout(
        MAIN,
        [],
        [addons[1]!, { ...addons[1]!, addon: { ...addons[1]!.addon, path: '/elsewhere/quick.py' } }],
        { pathApi: path.posix },
      ),
    );
    layoutFailure(() =>
      planLayout(MAIN, [], [{ ...addons[1]!, addon: { ...addons[1]!.addon, module: '../up' } }], {
        pathApi: path.posix,
      }),
    );
  });
});
