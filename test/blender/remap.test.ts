// The worker's path remap (blender/remap/remap_paths.py) with the real Blender: the pack fixture is laid
// out by hand as the packer would (project files in place, the others under _external/, remaps in
// the manifest), the original tree is moved away so its absolute paths lead nowhere, then the
// worker analyses and renders the unpacked copy. The Blender runs start in beforeAll, two at a time.
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACK_MANIFEST_NAME, type PackManifest } from '../../shared/pack/manifest.js';
import { analyzeScene, type SceneAnalysis } from '../../blender/analysis/analyze-scene.js';
import { parseManifest } from '../../zip/manifest.js';
import { parseSetupLine } from '../../blender/render/render-settings.js';
import {
  buildPackProject,
  cellColours,
  layOutByHand,
  mismatches,
  renderFrameOne,
  type PackProject,
  type RenderedFrame,
} from '../helpers/pack-fixture.js';

const BLENDER = process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender';

let work: string;
let fixture: PackProject;
let root: string;
let manifest: PackManifest;
let withRemaps: SceneAnalysis;
let without: SceneAnalysis;
let render: RenderedFrame;

async function analyse(name: string, remaps: PackManifest['remaps'] | undefined): Promise<SceneAnalysis> {
  const dir = join(work, name);
  await mkdir(dir);
  return analyzeScene({
    blender: BLENDER,
    file: join(root, 'scenes', 'main.blend'),
    workDir: dir,
    timeoutMs: 120_000,
    ...(remaps ? { pathRemaps: { root, remaps } } : {}),
  });
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-remap-'));
  fixture = await buildPackProject(join(work, 'src'));
  root = join(work, 'job', 'project');
  await layOutByHand(fixture, root);
  // The worker reads the manifest the way it does after unpacking an upload.
  manifest = parseManifest(await readFile(join(root, PACK_MANIFEST_NAME), 'utf8'));
  await rename(join(work, 'src'), join(work, 'src-moved'));
  // One remap that matches nothing, to see it counted as unused.
  const extra = { from: '/nowhere/else.png', to: 'textures/wood.png', blendFile: 'scenes/main.blend' };
  [withRemaps, without] = await Promise.all([
    analyse('with', [...manifest.remaps, extra]),
    analyse('without', undefined),
  ]);
  render = await renderFrameOne({
    root,
    sceneFile: 'scenes/main.blend',
    remaps: manifest.remaps,
    scene: withRemaps,
    workDir: work,
  });
}, 300_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('worker path remap', () => {
  it(
    'without the remaps the moved project misses its absolute files and its library (the failure the remap ' + 'fixes)',
    () => {
      const codes = without.warnings.map((w) => w.code);
      expect(codes).toContain('MISSING_LIBRARIES');
      const missing = (without.output.missingFiles ?? []).map((m) => m[2]);
      expect(missing).toEqual(expect.arrayContaining([join(fixture.root, 'assets', 'abs_red.png'), fixture.library]));
      expect(without.remap).toBeUndefined();
    },
  );

  it('analysis with the remaps finds every file except the one reported missing, and the library is loaded', () => {
    expect(withRemaps.remap).toEqual({ remapped: 4, failed: [], unused: 1 });
    const codes = withRemaps.warnings.map((w) => w.code);
    expect(codes).not.toContain('MISSING_LIBRARIES');
    expect(codes).not.toContain('PATHS_NOT_REMAPPED');
    // Every path Blender knows (bpy.utils.blend_paths) exists, except the file the packer reported missing.
    expect(withRemaps.output.missingFiles).toEqual([['Image', 'missing.png', '//../textures/missing.png']]);
    expect(manifest.missing.map((m) => m.path)).toEqual(['//../textures/missing.png']);
    expect(withRemaps.output.hostMissingFilesReport).toEqual([
      `Image 'missing.png': path '${join(root, 'textures', 'missing.png')}' not found`,
    ]);
    expect(withRemaps.output.linkedData).toEqual([{ name: 'props.blend', path: '//../libs/props.blend' }]);
    // The linked objects are real meshes again (a missing library leaves empty placeholders).
    expect(withRemaps.output.vramMetadata?.geometry.meshObjectCount).toBe(9);
    expect(without.output.vramMetadata?.geometry.meshObjectCount).toBe(6);
  });

  it(
    'a render with the remaps shows every texture: absolute, out of the project, in the library, sequence and ' +
      'UDIM',
    async () => {
      expect(render.result.exitCode, render.result.lastLines.join('\n')).toBe(0);
      const ok = render.lines.map(parseSetupLine).find((p) => p?.type === 'ok');
      expect(ok?.type === 'ok' && ok.summary.remappedPaths).toBe(4);
      expect(render.lines.filter((l) => l.startsWith('RB_WARNING'))).toEqual([]);
      // `missing` is magenta: Blender's colour for an image it cannot find.
      expect(mismatches(await cellColours(render.png))).toEqual({});
    },
  );
});
