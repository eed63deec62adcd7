// test-loop: full (packs projects on disk and reads every zip back with Python).
// The zip packProject writes: stored where deflating would not shrink, deflated otherwise; the same
// entries and manifest for the same project; and unpacked by the worker as it is.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { packProject } from '../../daemon/pack/pack-project.js';
import { pickSceneFile, resolveBundledAddons } from '../../service/worker/project/project-files.js';
import { unpackSource } from '../../zip/unpack.js';
import { DEFLATED, dep, put, readZip, scratchProject, sha256, STORED, textBytes, zipMethods } from './pack-helpers.js';

let base: string;
let proj: string;
let main: string;
beforeEach(() => void ({ base, proj, main } = scratchProject()));
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('packProject: the zip', () => {
  it(
    'stores what would not shrink (noise under any name, a compressed .blend) and deflates even data that ' +
      'shrinks 1000:1',
    async () => {
      const files = {
        noise: put(join(proj, 'shots', 'noise.bin'), randomBytes(300_000)),
        zstdLike: put(join(proj, 'shots', 'lib.blend'), gzipSync(textBytes(500_000))),
        zeros: put(join(proj, 'shots', 'empty.cache'), Buffer.alloc(3 * 1024 * 1024)),
        empty: put(join(proj, 'shots', 'nothing.txt'), ''),
        text: put(join(proj, 'shots', 'mesh.obj'), textBytes(300_000)),
      };
      const zipPath = join(base, 'out.zip');
      await packProject(
        {
          blendFile: main,
          dependencies: Object.values(files).map((f) => dep({ path: f, absolute: f, kind: 'other', blendFile: main })),
        },
        { zipPath },
      );
      expect(zipMethods(zipPath)).toMatchObject({
        'noise.bin': STORED,
        'lib.blend': STORED,
        // The worker judges no compression ratio (it has a per-job quota): zeros are deflated.
        'empty.cache': DEFLATED,
        'nothing.txt': STORED,
        'mesh.obj': DEFLATED,
      });
    },
  );

  it('makes zips the worker unpacks as they are: odd names, external files, remaps and add-ons included', async () => {
    const names = [
      'tex/wood grain #2.png',
      'tex/café ☕.png',
      'tex/a..b.png',
      'tex/[x] (1).png',
      'tex/ünïcödé/ß.png',
      'tex/.hidden.png',
    ];
    const files = names.map((n) => put(join(proj, n), randomBytes(200)));
    const ext = put(join(base, 'other drive', 'C', 'x.png'), randomBytes(200));
    const quick = put(join(base, 'addons', 'quick.py'), 'bl_info = {}\n');
    const out = await packProject(
      {
        blendFile: main,
        dependencies: [...files, ext].map((f) => dep({ path: f, absolute: f, kind: 'image', blendFile: main })),
        addons: [{ module: 'quick', name: 'Quick', path: quick, addonType: 'addon', selected: true }],
      },
      { zipPath: join(base, 'out.zip') },
    );
    const unpacked = await unpackSource({ source: out.zipPath, fileType: 'zip', jobDir: join(base, 'job') });
    expect(unpacked.files).toEqual([...out.manifest.entries.map((e) => e.path), 'renderbridge-manifest.json'].sort());
    expect(unpacked.manifest).toEqual(out.manifest);
    expect(pickSceneFile(unpacked.files, null, unpacked.manifest)).toBe(out.sceneFile);
    expect(
      resolveBundledAddons(unpacked.manifest, undefined, undefined, { root: unpacked.root, files: unpacked.files }).map(
        (a) => a.relativePath,
      ),
    ).toEqual(['_addons/quick.py']);
    for (const e of out.manifest.entries) expect(sha256(join(unpacked.root, e.path))).toBe(e.sha256);
  });

  it('gives the same entries and manifest when packing the same project twice', async () => {
    const deps = [1, 2, 3].map((i) => put(join(proj, 'tex', `t${i}.png`), randomBytes(100)));
    const input = {
      blendFile: main,
      dependencies: deps.reverse().map((f) => dep({ path: f, absolute: f, kind: 'image', blendFile: main })),
    };
    const a = await packProject(input, { zipPath: join(base, 'a.zip') });
    const b = await packProject(
      { ...input, dependencies: [...input.dependencies].reverse() },
      { zipPath: join(base, 'b.zip') },
    );
    expect(b.manifest).toEqual(a.manifest);
    expect(readZip(b.zipPath).entries).toEqual(readZip(a.zipPath).entries);
  });
});
