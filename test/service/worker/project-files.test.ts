// The project in an unpacked job folder (service/worker/project/project-files.ts): which .blend
// renders (pickSceneFile), and which add-ons the packer's manifest bundles (resolveBundledAddons).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pickSceneFile, resolveBundledAddons } from '../../../service/worker/project/project-files.js';
import { PACK_MANIFEST_NAME } from '../../../shared/pack/manifest.js';
import { UnpackError } from '../../../zip/errors.js';
import { unpackSource } from '../../../zip/unpack.js';
import { refusal, unpackScratch, writeZipIn } from '../../zip/unpack-helpers.js';

let base: string;
let jobDir: string;
beforeEach(() => void ({ base, jobDir } = unpackScratch()));
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('pickSceneFile', () => {
  const files = ['shots/a.blend', 'shots/a.blend1', 'b.blend', '__MACOSX/shots/._a.blend', 'tex/x.png'];

  it('needs pathToFileForRender when there are several .blend files, and lists them', () => {
    expect(() => pickSceneFile(files)).toThrow(UnpackError);
    try {
      pickSceneFile(files);
    } catch (e) {
      expect((e as UnpackError).code).toBe('SCENE_FILE_AMBIGUOUS');
      expect((e as UnpackError).details).toEqual({ choices: ['b.blend', 'shots/a.blend'] });
    }
  });

  it('accepts a normalised pathToFileForRender that exists', () => {
    expect(pickSceneFile(files, { pathToFileForRender: './shots//a.blend' })).toBe('shots/a.blend');
    expect(pickSceneFile(files, { pathToFileForRender: 'shots\\a.blend' })).toBe('shots/a.blend');
  });

  it.each(['c.blend', 'shots/a.blend1', '../b.blend', '/b.blend', 'tex/x.png'])(
    'refuses pathToFileForRender %s',
    (p) => {
      expect(() => pickSceneFile(files, { pathToFileForRender: p })).toThrow(
        /choose one of: b\.blend, shots\/a\.blend/,
      );
    },
  );

  it('ignores .blend1 backups and macOS metadata; a single .blend needs no choice', () => {
    expect(pickSceneFile(['s.blend', 's.blend1', '__MACOSX/._s.blend', '._s.blend'])).toBe('s.blend');
  });

  it('fails when there is no .blend', () => {
    expect(() => pickSceneFile(['x.blend1', 'y.png'])).toThrow(expect.objectContaining({ code: 'SCENE_FILE_MISSING' }));
  });
});

describe('bundled add-ons from the packer manifest', () => {
  const manifest = {
    version: 1,
    sceneFile: 'shots/a.blend',
    addons: [
      { id: 'my_rig', name: 'My Rig', path: 'addons/my_rig' },
      { id: 'helper', name: 'Helper', path: 'addons/helper.py' },
    ],
  };

  async function unpackWithManifest(m: unknown) {
    return unpackSource({
      fileType: 'zip',
      jobDir,
      source: writeZipIn(base, [
        { name: 'shots/a.blend', data: 'a' },
        { name: 'b.blend', data: 'b' },
        { name: 'addons/my_rig/__init__.py', data: 'bl_info = {}' },
        { name: 'addons/helper.py', data: 'bl_info = {}' },
        { name: PACK_MANIFEST_NAME, data: JSON.stringify(m) },
      ]),
    });
  }

  it('reads the manifest; its sceneFile settles several .blend files', async () => {
    const r = await unpackWithManifest(manifest);
    expect(r.manifest?.addons).toHaveLength(2);
    expect(pickSceneFile(r.files, undefined, r.manifest)).toBe('shots/a.blend');
    expect(pickSceneFile(r.files, { pathToFileForRender: 'b.blend' }, r.manifest)).toBe('b.blend');
  });

  it('resolves the add-ons to enable to paths inside the job folder', async () => {
    const r = await unpackWithManifest(manifest);
    const all = resolveBundledAddons(r.manifest, undefined, undefined, { root: r.root, files: r.files });
    expect(all.map((a) => a.path)).toEqual([join(r.root, 'addons/my_rig'), join(r.root, 'addons/helper.py')]);
    const some = resolveBundledAddons(r.manifest, [{ id: 'cycles', name: 'Cycles' }], ['./addons/helper.py'], {
      root: r.root,
      files: r.files,
    });
    expect(some).toEqual([
      { id: 'helper', name: 'Helper', relativePath: 'addons/helper.py', path: join(r.root, 'addons/helper.py') },
    ]);
    expect(resolveBundledAddons(r.manifest, [{ id: 'my_rig', name: '' }], [], { root: r.root })).toHaveLength(1);
  });

  it('refuses unknown add-on paths, listing the valid ones', async () => {
    const r = await unpackWithManifest(manifest);
    expect(() => resolveBundledAddons(r.manifest, undefined, ['addons/nope'], { root: r.root })).toThrow(
      expect.objectContaining({
        code: 'ADDON_PATH_UNKNOWN',
        details: { unknown: ['addons/nope'], choices: ['addons/my_rig', 'addons/helper.py'] },
      }),
    );
    expect(() => resolveBundledAddons(null, undefined, ['x'], { root: r.root })).toThrow(
      expect.objectContaining({ code: 'ADDON_PATH_UNKNOWN' }),
    );
  });

  it('refuses a manifest naming add-ons the archive lacks, and a malformed manifest', async () => {
    const r = await unpackWithManifest({ ...manifest, addons: [{ id: 'ghost', name: 'Ghost', path: 'addons/ghost' }] });
    expect(() => resolveBundledAddons(r.manifest, undefined, undefined, { root: r.root, files: r.files })).toThrow(
      expect.objectContaining({ code: 'ADDON_MISSING' }),
    );
    rmSync(join(jobDir, 'project'), { recursive: true });
    const bad = await refusal(unpackWithManifest({ ...manifest, sceneFile: '../../etc/passwd' }));
    expect(bad.code).toBe('ZIP_BAD_MANIFEST');
  });
});
