import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { packProject } from '../../daemon/pack/pack-project.js';
import { inspectZip } from '../../daemon/pack/preflight.js';
import { UploadPreflight } from '../../shared/api/upload.js';
import { MAX_MANIFEST_BYTES, PACK_MANIFEST_NAME } from '../../shared/pack/manifest.js';
import { buildZip } from '../zip/zip-writer.js';
import { put, packFailure } from './pack-helpers.js';

let base: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'rb-preflight-'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function zipFile(entries: Parameters<typeof buildZip>[0]): string {
  const file = join(base, 'upload.zip');
  writeFileSync(file, buildZip(entries));
  return file;
}

describe('inspectZip', () => {
  it(
    "previews a packed project: its scene files and bundled add-ons, and the artist's unselected add-ons as " +
      'not bundled',
    async () => {
      const main = put(join(base, 'proj', 'scene.blend'), 'BLENDER-v304');
      const lib = put(join(base, 'proj', 'libs', 'props.blend'), 'BLENDER-v304');
      const rig = join(base, 'addons', 'rigtools');
      put(join(rig, '__init__.py'), 'bl_info = {}\n');
      const quick = put(join(base, 'addons', 'quick.py'), 'bl_info = {}\n');
      const addons = [
        { module: 'rigtools', name: 'Rig Tools', path: rig, addonType: 'addon', selected: true },
        { module: 'quick', name: 'Quick', path: quick, addonType: 'addon', selected: false },
      ];
      const out = await packProject(
        {
          blendFile: main,
          dependencies: [
            {
              path: '//libs/props.blend',
              absolute: lib,
              kind: 'library',
              pattern: 'file',
              blendFile: main,
              usedBy: [],
            },
          ],
          addons,
        },
        { zipPath: join(base, 'out.zip') },
      );
      const preflight = await inspectZip(out.zipPath, addons);
      expect(UploadPreflight.parse(preflight)).toEqual(preflight);
      expect(preflight).toEqual({
        schemaVersion: 1,
        source: 'client_zip_inspection',
        blendFiles: ['libs/props.blend', 'scene.blend'],
        packerManifestPreview: {
          manifestPath: PACK_MANIFEST_NAME,
          bundledAddons: [
            {
              bundledPathInPack: '_addons/rigtools',
              name: 'Rig Tools',
              module: 'rigtools',
              addonType: 'addon',
              selectedForBundle: true,
            },
            { bundledPathInPack: '', name: 'Quick', module: 'quick', addonType: 'addon', selectedForBundle: false },
          ],
        },
      });
      // Without the artist's list, only what the manifest bundles.
      expect((await inspectZip(out.zipPath)).packerManifestPreview?.bundledAddons.map((a) => a.module)).toEqual([
        'rigtools',
      ]);
    },
  );

  it('lists the .blend files of a hand-made zip (no backups, no macOS metadata) and previews no manifest', async () => {
    const src = join(base, 'src');
    put(join(src, 'shot.blend'), 'BLENDER-v304');
    put(join(src, 'shot.blend1'), 'backup');
    put(join(src, 'sub', 'Other.BLEND'), 'BLENDER-v304');
    put(join(src, '__MACOSX', 'sub', '._Other.BLEND'), 'resource fork');
    put(join(src, 'sub', '._shot.blend'), 'AppleDouble');
    execFileSync('zip', ['-q', '-r', join(base, 'hand.zip'), '.'], { cwd: src });
    expect(await inspectZip(join(base, 'hand.zip'))).toEqual({
      schemaVersion: 1,
      source: 'client_zip_inspection',
      blendFiles: ['shot.blend', 'sub/Other.BLEND'],
      packerManifestPreview: null,
    });
  });

  it('refuses a file that is not a zip, a truncated zip and unsafe entry names, saying what is wrong', async () => {
    const junk = put(join(base, 'junk.zip'), 'this is not a zip at all');
    expect((await packFailure(inspectZip(junk))).message).toContain(junk);
    const good = zipFile([{ name: 'scene.blend', data: 'BLENDER-v304'.repeat(1000) }]);
    const bytes = readFileSync(good);
    writeFileSync(good, bytes.subarray(0, bytes.length - 30));
    await packFailure(inspectZip(good));
    expect((await packFailure(inspectZip(zipFile([{ name: '../evil.blend', data: 'x' }])))).message).toMatch(
      /relative path|\.\./,
    );
  });

  it(
    'refuses a manifest that is not JSON, does not match the schema, or is larger than the cap (counted on ' +
      'real bytes)',
    async () => {
      const scene = { name: 'scene.blend', data: 'BLENDER-v304' };
      expect(
        (await packFailure(inspectZip(zipFile([scene, { name: PACK_MANIFEST_NAME, data: '{nope' }])))).message,
      ).toContain('not valid JSON');
      expect(
        (await packFailure(inspectZip(zipFile([scene, { name: PACK_MANIFEST_NAME, data: '{"version": 2}' }])))).message,
      ).toContain('schema');
      const huge = `{"version":1,"sceneFile":"scene.blend"${' '.repeat(MAX_MANIFEST_BYTES)}}`;
      expect(
        (await packFailure(inspectZip(zipFile([scene, { name: PACK_MANIFEST_NAME, data: huge }])))).message,
      ).toContain('larger than');
      // A header that understates the size: the bytes are counted, not the claim.
      const liar = zipFile([scene, { name: PACK_MANIFEST_NAME, data: huge, declaredSize: 100 }]);
      await packFailure(inspectZip(liar));
    },
  );
});
