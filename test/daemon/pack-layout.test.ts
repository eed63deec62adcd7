import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DaemonError } from '../../daemon/errors.js';
import { mirrorPath, placePath, projectRoot } from '../../daemon/pack/archive-paths.js';
import { planLayout, type ExpandedAddon, type ExpandedDependency } from '../../daemon/pack/layout.js';
import type { CollectedDependencyInput } from '../../shared/pack/dependencies.js';
import { dep } from './pack-helpers.js';

const MAIN = '/home/ann/proj/shots/sh010.blend';

/** A dependency whose files all exist (the file itself, or the given files for a pattern). */
function found(d: CollectedDependencyInput, files?: string[]): ExpandedDependency {
  return { dep: dep(d), files: files ?? [d.absolute], missing: [] };
}

function failure(fn: () => unknown): DaemonError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DaemonError);
    expect((err as DaemonError).code).toBe('PACK_FAILED');
    return err as DaemonError;
  }
  throw new Error('expected PACK_FAILED');
}

describe('mirrorPath: the place of a file outside the project, below _external/', () => {
  it('drops the leading slash of a POSIX path and normalises it', () => {
    expect(mirrorPath('/mnt/assets/wood.png', path.posix)).toBe('mnt/assets/wood.png');
    expect(mirrorPath('/mnt/assets/../lib/./x.blend', path.posix)).toBe('mnt/lib/x.blend');
  });

  it('turns drive letters, UNC shares and long-path prefixes into folders', () => {
    expect(mirrorPath('C:\\maps\\a.png', path.win32)).toBe('C/maps/a.png');
    expect(mirrorPath('c:/maps/b.png', path.win32)).toBe('C/maps/b.png');
    expect(mirrorPath('\\\\server\\share\\tex\\a.png', path.win32)).toBe('UNC/server/share/tex/a.png');
    expect(mirrorPath('\\\\?\\D:\\deep\\a.png', path.win32)).toBe('D/deep/a.png');
    expect(mirrorPath('\\\\?\\UNC\\nas\\lib\\a.png', path.win32)).toBe('UNC/nas/lib/a.png');
  });
});

describe('projectRoot', () => {
  it('widens to the common folder of the main file and its own // targets only', () => {
    const deps = [
      dep({ path: '//../tex/wood.png', absolute: '/home/ann/proj/tex/wood.png', kind: 'image', blendFile: MAIN }),
      // An absolute path and a library's own relative path never move the root.
      dep({ path: '/mnt/lib/rock.png', absolute: '/mnt/lib/rock.png', kind: 'image', blendFile: MAIN }),
      dep({ path: '//../../x.png', absolute: '/mnt/x.png', kind: 'image', blendFile: '/mnt/lib/props/props.blend' }),
    ];
    expect(projectRoot(MAIN, deps, path.posix)).toBe('/home/ann/proj');
    expect(projectRoot(MAIN, deps.slice(1), path.posix)).toBe('/home/ann/proj/shots');
  });

  it('takes a cache folder itself, not its parent', () => {
    const cache = dep({
      path: '//../../cache',
      absolute: '/home/ann/cache',
      kind: 'cache',
      pattern: 'directory',
      blendFile: MAIN,
    });
    expect(projectRoot(MAIN, [cache], path.posix)).toBe('/home/ann');
  });
});

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

  it('fails on two different files whose archive names differ only in letter case or Unicode form', () => {
    const upper = '/home/ann/proj/shots/Wood.png';
    const lower = '/home/ann/proj/shots/wood.png';
    const err = failure(() =>
      planLayout(
        MAIN,
        [
          found({ path: '//Wood.png', absolute: upper, kind: 'image', blendFile: MAIN }),
          found({ path: '//wood.png', absolute: lower, kind: 'image', blendFile: MAIN }),
        ],
        [],
        {
          pathApi: path.posix,
          identity: (f) => f, // two files
        },
      ),
    );
    expect(err.message).toContain(upper);
    expect(err.message).toContain(lower);
    const nfd = '/home/ann/proj/shots/cafe\u0301.png';
    const nfc = '/home/ann/proj/shots/caf\u00e9.png';
    failure(() =>
      planLayout(
        MAIN,
        [
          found({ path: '//a', absolute: nfd, kind: 'image', blendFile: MAIN }),
          found({ path: '//b', absolute: nfc, kind: 'image', blendFile: MAIN }),
        ],
        [],
        {
          pathApi: path.posix,
          identity: (f) => f,
        },
      ),
    );
  });

  it('stores one file reached by two spellings once, and remaps the other spelling to it', () => {
    const a = '/home/ann/proj/shots/Wood.png';
    const b = '/home/ann/proj/shots/wood.png';
    const layout = planLayout(
      MAIN,
      [
        found({ path: '//Wood.png', absolute: a, kind: 'image', blendFile: MAIN }),
        found({ path: '//wood.png', absolute: b, kind: 'image', blendFile: MAIN }),
      ],
      [],
      {
        pathApi: path.posix,
        identity: () => '1:42', // one inode
      },
    );
    expect(layout.entries.map((e) => e.path)).toEqual(['Wood.png', 'sh010.blend']);
    expect(layout.remaps).toEqual([{ from: '//wood.png', to: 'Wood.png', blendFile: 'sh010.blend' }]);
  });

  it('refuses names a zip cannot carry safely, naming the file', () => {
    const back = '/home/ann/proj/shots/a\\b.png';
    expect(
      failure(() =>
        planLayout(MAIN, [found({ path: '//x', absolute: back, kind: 'image', blendFile: MAIN })], [], {
          pathApi: path.posix,
        }),
      ).message,
    ).toContain(back);
    const drive = '/home/ann/proj/shots/c:evil.png';
    expect(
      failure(() =>
        planLayout(MAIN, [found({ path: '//x', absolute: drive, kind: 'image', blendFile: MAIN })], [], {
          pathApi: path.posix,
        }),
      ).message,
    ).toContain(drive);
    // archiver strips a leading "word:" as if it were a drive: the entry would be stored under another name.
    const colon = '/home/ann/proj/shots/take2:final.png';
    expect(
      failure(() =>
        planLayout(MAIN, [found({ path: '//x', absolute: colon, kind: 'image', blendFile: MAIN })], [], {
          pathApi: path.posix,
        }),
      ).message,
    ).toContain('drive');
    const ctrl = '/home/ann/proj/shots/a\nb.png';
    failure(() =>
      planLayout(MAIN, [found({ path: '//x', absolute: ctrl, kind: 'image', blendFile: MAIN })], [], {
        pathApi: path.posix,
      }),
    );
  });

  it("leaves out a project file named like the packer's manifest, and fails when a file takes a folder's name", () => {
    const own = '/home/ann/proj/shots/renderbridge-manifest.json';
    const layout = planLayout(
      MAIN,
      [found({ path: '//renderbridge-manifest.json', absolute: own, kind: 'other', blendFile: MAIN })],
      [],
      { pathApi: path.posix },
    );
    expect(layout.entries.map((e) => e.path)).toEqual(['sh010.blend']);
    expect(layout.skipped.map((s) => s.source)).toEqual([own]);
    // The project has a file `_external/mnt`; an external /mnt/a.png needs that name as a folder.
    const main = '/p/scene.blend';
    failure(() =>
      planLayout(
        main,
        [
          found({ path: '//_external/mnt', absolute: '/p/_external/mnt', kind: 'other', blendFile: main }),
          found({ path: '/mnt/a.png', absolute: '/mnt/a.png', kind: 'image', blendFile: main }),
        ],
        [],
        {
          pathApi: path.posix,
        },
      ),
    );
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
    failure(() =>
      planLayout(
        MAIN,
        [],
        [addons[1]!, { ...addons[1]!, addon: { ...addons[1]!.addon, path: '/elsewhere/quick.py' } }],
        { pathApi: path.posix },
      ),
    );
    failure(() =>
      planLayout(MAIN, [], [{ ...addons[1]!, addon: { ...addons[1]!.addon, module: '../up' } }], {
        pathApi: path.posix,
      }),
    );
  });

  it('places a path of the root itself as the empty path', () => {
    expect(placePath('/home/ann/proj', '/home/ann/proj', path.posix)).toBe('');
    expect(placePath('/home/ann/proj/a/b.png', '/home/ann/proj', path.posix)).toBe('a/b.png');
    expect(placePath('/home/ann/project2/b.png', '/home/ann/proj', path.posix)).toBe(
      '_external/home/ann/project2/b.png',
    );
  });
});
