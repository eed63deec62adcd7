// Scene analysis of every fixture with the real Blender. Each fixture is analysed once (beforeAll);
// the tests then assert on the stored results, to keep Blender starts (~2 s each) few.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import yauzl from 'yauzl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SceneMetadata } from '../../shared/api/scene.js';
import { analyzeScene, type SceneAnalysis } from '../../blender/analysis/analyze-scene.js';
import { BlenderFileUnreadableError } from '../../blender/errors.js';
import { asTaskOutcome, FatalTaskError } from '../../service/worker/runtime/outcomes.js';
import { buildFixture, buildFixtureZip, FIXTURE_NAMES, type FixtureName } from '../helpers/fixtures.js';

const BLENDER = process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender';
let work: string;
const results = new Map<string, SceneAnalysis>();

function result(name: string): SceneAnalysis {
  const r = results.get(name);
  if (!r) throw new Error(`no analysis for ${name}`);
  return r;
}
const codes = (name: string) => result(name).warnings.map((w) => w.code);

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-analyze-'));
  // The 4th element bundles the add-on that addon-nodes' builder writes beside it, with those ids selected;
  // the 5th is the builder's extra arguments.
  const jobs: Array<[string, FixtureName, string | undefined, string[]?, string[]?]> = [
    ...FIXTURE_NAMES.map((n): [string, FixtureName, undefined] => [n, n, undefined]),
    ['basic-wrong-scene', 'basic', 'NoSuchScene'],
    ['addon-nodes-bundled', 'addon-nodes', undefined, ['rb_test_nodes']],
    ['addon-nodes-unselected', 'addon-nodes', undefined, []],
    ['addon-engine', 'addon-nodes', undefined, undefined, ['engine']],
  ];
  // Two at a time: the machine has two cores.
  const queue = [...jobs];
  const worker = async () => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      const [key, fixture, scene, selected, args] = job;
      const file = await buildFixture(fixture, { blender: BLENDER, ...(args ? { args } : {}) });
      const dir = join(work, key);
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir);
      const addons = selected && {
        bundled: [{ id: 'rb_test_nodes', path: join(dirname(file), 'rb_test_nodes.py') }],
        selected,
      };
      results.set(
        key,
        await analyzeScene({
          blender: BLENDER,
          file,
          scene,
          workDir: dir,
          timeoutMs: 120_000,
          ...(addons ? { addons } : {}),
        }),
      );
    }
  };
  await Promise.all([worker(), worker()]);
}, 300_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('analyzeScene', () => {
  it('returns output that parses with the API schema, and the Blender version', () => {
    for (const [key, r] of results) {
      expect(SceneMetadata.safeParse(r.output).success, key).toBe(true);
      expect(r.output.analysisWarnings).toEqual(r.warnings);
      expect(r.blenderVersion?.major, key).toBeGreaterThanOrEqual(3);
      expect(r.durationMs).toBeGreaterThan(0);
    }
  });

  it('basic: cameras, view layers, frames, resolution, engine and animation', () => {
    const o = result('basic').output;
    expect(o.fileName).toBe('basic.blend');
    expect(o.pathToFileForRender).toBe('basic.blend');
    expect(o.cameras?.map((c) => c.name).sort()).toEqual(['CamA', 'CamB']);
    expect(o.sceneCameras?.find((c) => c.objectName === 'CamA')).toMatchObject({ isSavedActive: true, type: 'PERSP' });
    expect(o.sceneCameras?.find((c) => c.objectName === 'CamB')?.isSavedActive).toBe(false);
    expect(o.viewLayers).toEqual([
      { name: 'Main', use: true, isActive: true },
      { name: 'Alt', use: true, isActive: false },
    ]);
    expect(o.activeViewLayer).toBe('Main');
    expect(o.renderLayersAndPasses?.map((l) => l.name)).toEqual(['Main', 'Alt']);
    expect(o.renderFrameRange).toEqual([1, 24]);
    expect(o.frameStep).toBe(1);
    expect(o.resolution).toEqual([64, 48]);
    expect(o.resolutionPercentage).toBe(100);
    expect(o).toMatchObject({ renderEngine: 'CYCLES', samples: 4, denoisingEnabled: false, outputFormat: 'PNG' });
    expect(o.outputMediaType).toBe('IMAGE');
    expect(o.fps).toBe(24);
    expect(o.animations?.[0]?.frame_range).toEqual([1, 24]);
    expect(o.scenes?.[0]).toMatchObject({ name: 'Scene', is_active: true });
    expect(o.hostFileVersion?.slice(0, 2)).toEqual([
      result('basic').blenderVersion?.major,
      result('basic').blenderVersion?.minor,
    ]);
    expect(o.fileSize).toBeGreaterThan(1000);
    expect(o.vramMetadata?.geometry).toMatchObject({ meshObjectCount: 1, vertexCount: 8, triangleCount: 12 });
    expect(o.vramMetadata?.renderOutput.viewLayerCount).toBe(2);
    expect(o.missingFiles).toEqual([]);
    expect(result('basic').warnings.filter((w) => w.blocking)).toEqual([]);
  });

  it('compositor: the File Output node and its two slots', () => {
    const o = result('compositor').output;
    expect(o.compositionNodeTreeEnabled).toBe(true);
    expect(o.haveOutputFileNode).toBe(true);
    expect(o.compositorHasRenderOutputNode).toBe(true);
    expect(o.compositeOutputNodes).toHaveLength(1);
    expect(o.compositeOutputNodes?.[0]).toMatchObject({ name: 'FileOut', format: 'PNG', media_type: 'IMAGE' });
    expect(o.compositeOutputNodes?.[0]?.slots.map((s) => s.path)).toEqual(['beauty_', 'mask']);
    expect(result('basic').output.haveOutputFileNode).toBe(false);
  });

  it('stereo: multiview with left and right views written individually', () => {
    const s = result('stereo').output.stereoscopySettings?.[0];
    expect(s).toMatchObject({
      scene_name: 'Scene',
      use_multiview: true,
      views_format: 'STEREO_3D',
      views_output: 'INDIVIDUAL',
    });
    expect(s?.views.filter((v) => v.use).map((v) => v.file_suffix)).toEqual(['_L', '_R']);
    expect(result('basic').output.stereoscopySettings?.[0]?.use_multiview).toBe(false);
  });

  it('missing texture: listed, reported and warned about (not blocking)', () => {
    const r = result('missing-texture');
    expect(r.output.missingFiles).toEqual([['Image', 'MissingTex', '//textures/does-not-exist.png']]);
    expect(r.output.hostMissingFilesReport?.[0]).toMatch(/textures\/does-not-exist\.png' not found/);
    expect(r.warnings.find((w) => w.code === 'MISSING_FILES')).toMatchObject({ blocking: false });
    expect(r.output.vramMetadata?.textures).toMatchObject({ imageCount: 1, unknownSizeCount: 1 });
  });

  it('denoise: denoising on, and the build cannot denoise', () => {
    const r = result('denoise');
    expect(r.output.denoisingEnabled).toBe(true);
    expect(r.warnings.find((w) => w.code === 'DENOISER_UNAVAILABLE')).toMatchObject({ blocking: false });
    expect(codes('basic')).not.toContain('DENOISER_UNAVAILABLE');
  });

  it("autoexec: the file's scripts are reported, not run", () => {
    expect(result('autoexec').warnings.find((w) => w.code === 'AUTOEXEC_DISABLED')?.message).toMatch(
      /1 auto-run script.*1 Python driver/,
    );
  });

  it('odd: no camera, no world, unbaked simulations, a missing library and odd image paths', () => {
    const r = result('odd');
    const byCode = new Map(r.warnings.map((w) => [w.code, w]));
    expect(byCode.get('NO_CAMERA')?.blocking).toBe(true);
    expect(byCode.get('MISSING_LIBRARIES')?.blocking).toBe(true);
    expect(byCode.get('MISSING_FILES')?.blocking).toBe(false);
    expect(byCode.get('MISSING_CACHE')?.blocking).toBe(false);
    expect(byCode.has('ANALYSIS_SECTION_FAILED')).toBe(false);
    expect(r.output.sceneCameras).toEqual([]);
    expect(r.output.worldSettings).toBeNull();
    expect(r.output.missingCaches?.map((c) => [c.type, c.objectName, c.objectModifierName])).toEqual([
      ['CLOTH', 'Cube', 'Cloth'],
      ['PARTICLES', 'Emitter', 'Particles'],
    ]);
    expect(r.output.missingFiles?.map((m) => m[0]).sort()).toEqual(['Image', 'Image', 'Library']);
    expect(r.output.missingFiles).toContainEqual(['Image', 'Tiles', '//udim/tex.1001.png']);
    expect(r.output.vramMetadata?.riskFeatures).toMatchObject({
      hasSubdivision: true,
      hasGeometryNodes: true,
      hasHairOrParticles: true,
    });
    expect(r.output.vramMetadata?.textures.tiledImageCount).toBe(1);
    expect(codes('basic')).not.toContain('MISSING_CACHE');
  });

  it(
    "addons: what each file's data needs (not the worker's own add-ons), attributed to bundled or Blender's " +
      'add-ons',
    () => {
      for (const name of FIXTURE_NAMES.filter((n) => !n.startsWith('addon-')))
        expect(result(name).output.addons, name).toEqual([]);
      for (const name of FIXTURE_NAMES)
        expect(codes(name).filter((c) => c === 'ADDON_REQUIRED').length, name).toBe(name.startsWith('addon-') ? 1 : 0);
      // No add-on here defines these: the saved identifiers themselves (node types read from the file's bytes).
      expect(result('addon-nodes').output.addons).toEqual(['RBTestNode', 'RBTestTreeType', 'rb_test_props']);
      const nodes = result('addon-nodes').warnings.find((w) => w.code === 'ADDON_REQUIRED');
      expect(nodes?.blocking).toBe(false);
      expect(nodes?.message).toMatch(
        /node tree type 'RBTestTreeType' \(tree 'RB Tree'\).*node type 'RBTestNode' \(node 'RB Node' in tree 'RB Tree'\).*property group 'rb_test_props' \(Scene 'Scene'\)/,
      );
      // Blender's own Sun Position add-on, off with factory settings, found from its scene property group.
      expect(result('addon-sun').output.addons).toEqual(['sun_position']);
      expect(result('addon-sun').warnings.find((w) => w.code === 'ADDON_REQUIRED')?.message).toMatch(
        /sun_position.*sun_pos_properties.*addonsToUse/,
      );
      // Bundled and selected: every identifier is the bundled module's, and nothing is left to warn about.
      expect(result('addon-nodes-bundled').output.addons).toEqual(['rb_test_nodes']);
      expect(codes('addon-nodes-bundled')).not.toContain('ADDON_REQUIRED');
      expect(result('addon-nodes-unselected').output.addons).toEqual(['rb_test_nodes']);
      expect(result('addon-nodes-unselected').warnings.find((w) => w.code === 'ADDON_REQUIRED')?.message).toMatch(
        /bundled add-on rb_test_nodes, which is not selected/,
      );
      expect(result('addon-nodes').output.renderEngine).toBe('CYCLES');
    },
  );

  it(
    "an add-on's render engine that is not registered is named and blocks, instead of showing Blender's EEVEE " +
      'fallback',
    () => {
      const r = result('addon-engine');
      expect(r.output.addons).toEqual(['RBTestNode', 'RBTestTreeType', 'RB_TEST_ENGINE', 'rb_test_props']);
      expect(r.output.renderEngine).toBeUndefined();
      expect(r.warnings.find((w) => w.code === 'UNSUPPORTED_ENGINE')).toMatchObject({ blocking: true });
      expect(r.warnings.find((w) => w.code === 'UNSUPPORTED_ENGINE')?.message).toContain('RB_TEST_ENGINE');
    },
  );

  it('a scene name not in the file is a blocking warning', () => {
    const w = result('basic-wrong-scene').warnings.find((x) => x.code === 'SCENE_NOT_FOUND');
    expect(w).toMatchObject({ blocking: true });
    expect(w?.message).toContain('NoSuchScene');
  });

  it('a file Blender cannot open fails validation with its last lines', async () => {
    const bad = join(work, 'broken.blend');
    await writeFile(bad, 'this is not a blend file');
    const thrown = await analyzeScene({ blender: BLENDER, file: bad, workDir: work }).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(BlenderFileUnreadableError);
    // What the validate task fails with: the worker's mapping of blender/'s error.
    const err = asTaskOutcome(thrown);
    expect(err).toBeInstanceOf(FatalTaskError);
    const fr = (err as FatalTaskError).failedReason;
    expect(fr).toMatchObject({ type: 'VALIDATION_FAILED', name: 'SCENE_FILE_UNREADABLE' });
    expect((fr.errorDetails.lastLines as string[]).join('\n')).toMatch(/not supported|Cannot read/);
  });
});

describe('fixture zip', () => {
  it('holds two .blend files', async () => {
    const out = join(work, 'two.zip');
    const entries = await buildFixtureZip(['basic', 'compositor'], out);
    const names = await new Promise<string[]>((resolve, reject) => {
      yauzl.open(out, { lazyEntries: true }, (err, zip) => {
        if (err) return reject(err);
        const seen: string[] = [];
        zip.on('entry', (e: yauzl.Entry) => {
          seen.push(e.fileName);
          zip.readEntry();
        });
        zip.on('end', () => resolve(seen));
        zip.on('error', reject);
        zip.readEntry();
      });
    });
    // archiver may write the two files in either order.
    expect([...names].sort()).toEqual([...entries].sort());
    expect([...names].sort()).toEqual(['project/basic.blend', 'project/compositor.blend']);
  });
});
