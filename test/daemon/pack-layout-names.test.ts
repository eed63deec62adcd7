// The names the packer's layout refuses or folds: two files whose archive names differ only in letter
// case or Unicode form, one file reached by two spellings, names a zip cannot carry safely, and
// files that would take the manifest's or a folder's name.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planLayout } from '../../daemon/pack/layout.js';
import { found, layoutFailure } from './pack-helpers.js';

const MAIN = '/home/ann/proj/shots/sh010.blend';

describe('planLayout: archive names', () => {
  it('fails on two different files whose archive names differ only in letter case or Unicode form', () => {
    const upper = '/home/ann/proj/shots/Wood.png';
    const lower = '/home/ann/proj/shots/wood.png';
    const err = layoutFailure(() =>
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
    layoutFailure(() =>
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
      layoutFailure(() =>
        planLayout(MAIN, [found({ path: '//x', absolute: back, kind: 'image', blendFile: MAIN })], [], {
          pathApi: path.posix,
        }),
      ).message,
    ).toContain(back);
    const drive = '/home/ann/proj/shots/c:evil.png';
    expect(
      layoutFailure(() =>
        planLayout(MAIN, [found({ path: '//x', absolute: drive, kind: 'image', blendFile: MAIN })], [], {
          pathApi: path.posix,
        }),
      ).message,
    ).toContain(drive);
    // archiver strips a leading "word:" as if it were a drive: the entry would be stored under another name.
    const colon = '/home/ann/proj/shots/take2:final.png';
    expect(
      layoutFailure(() =>
        planLayout(MAIN, [found({ path: '//x', absolute: colon, kind: 'image', blendFile: MAIN })], [], {
          pathApi: path.posix,
        }),
      ).message,
    ).toContain('drive');
    const ctrl = '/home/ann/proj/shots/a\nb.png';
    layoutFailure(() =>
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
    layoutFailure(() =>
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
});
