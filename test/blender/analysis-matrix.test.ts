// analyze.py on every build of the matrix (3.4, 4.3, 5.2), on files saved by that build: Blender's
// own app templates (files nobody here wrote) and the fixtures whose APIs changed between versions
// (compositor, denoising, stereo, Blender's bundled asset libraries, keyframed Subdivision levels).
// What a user would check: no section fails, the fields the worker plans with are there, warnings
// name what they should, and the memory estimate does not depend on the build that reads the file.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SceneMetadata } from '../../shared/api/scene.js';
import { analyzeScene, type SceneAnalysis } from '../../blender/analysis/analyze-scene.js';
import { expectedFileNames } from '../../service/domain/expected-outputs.js';
import { testBuilds, usableBuilds } from '../helpers/blender-builds.js';
import { eeveeOf, finalOf, fixtureOf, type MatrixFixture, pool, templateFiles } from './matrix.js';

const FIXTURES: MatrixFixture[] = [
  'basic',
  'compositor',
  'denoise',
  'stereo',
  'blender-assets',
  'odd',
  'autoexec',
  'stepped-levels',
];
/** The keys of test/fixtures/blend/build_stepped_levels.py (constant interpolation): level from frame. */
const STEPPED_LEVELS = [
  { frame: 1, value: 0 },
  { frame: 4, value: 2 },
  { frame: 8, value: 3 },
  { frame: 11, value: 1 },
];
/** stepped-levels' analysis-only estimate (vramMetadata.estimatedBytes) per build, compared across them. */
const steppedEstimates = new Map<string, number | undefined>();
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-analysis-matrix-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe.each(usableBuilds('analysis matrix').map((b) => [b.minor, b] as const))(
  'analysis on Blender %s',
  (_minor, build) => {
    const results = new Map<string, SceneAnalysis>();
    const templates = templateFiles(build);
    const of = (key: string): SceneAnalysis => {
      const r = results.get(key);
      if (!r) throw new Error(`no analysis of ${key} on ${build.minor}`);
      return r;
    };
    const codes = (key: string) => of(key).warnings.map((w) => w.code);

    beforeAll(async () => {
      // [key, file, the add-on ids the render enables (the add-on addon-nodes' builder writes beside it is bundled)]
      const jobs: Array<[string, () => Promise<string>, string[]?]> = [
        ...FIXTURES.map((f): [string, () => Promise<string>] => [f, () => fixtureOf(f, build)]),
        ...templates.map((t): [string, () => Promise<string>] => [
          `template:${basename(dirname(t))}`,
          () => Promise.resolve(t),
        ]),
        ['addon-nodes', () => fixtureOf('addon-nodes', build), []],
        ['addon-engine', () => fixtureOf('addon-nodes', build, ['engine'])],
      ];
      await pool(
        jobs.map(([key, fileOf, selected]) => async () => {
          const dir = join(work, build.minor, key.replace(/\W/g, '_'));
          await mkdir(dir, { recursive: true });
          const file = await fileOf();
          const addons = selected && {
            bundled: [{ id: 'rb_test_nodes', path: join(dirname(file), 'rb_test_nodes.py') }],
            selected,
          };
          results.set(
            key,
            await analyzeScene({
              blender: build.path,
              file,
              workDir: dir,
              timeoutMs: 120_000,
              ...(addons ? { addons } : {}),
            }),
          );
        }),
      );
      steppedEstimates.set(build.minor, of('stepped-levels').output.vramMetadata?.estimatedBytes);
    }, 600_000);

    it(
      'analyses every app template that ships with it without a failed section, and the result fits the API ' +
        'schema',
      () => {
        expect(templates.map((t) => basename(dirname(t)))).toEqual(
          expect.arrayContaining(['2D_Animation', 'Sculpting', 'VFX', 'Video_Editing']),
        );
        for (const key of [...results.keys()]) {
          const r = of(key);
          expect(
            r.warnings.filter((w) => w.code === 'ANALYSIS_SECTION_FAILED' || w.code === 'ANALYSIS_FIELD_DROPPED'),
            key,
          ).toEqual([]);
          expect(SceneMetadata.safeParse(r.output).success, key).toBe(true);
          expect(`${r.blenderVersion?.major}.${r.blenderVersion?.minor}`, key).toBe(build.minor);
        }
        for (const t of templates) {
          const r = of(`template:${basename(dirname(t))}`);
          expect(r.output.fileName).toBe('startup.blend');
          // Files of Blender's own (the 5.2 templates link its Essentials brushes) are never missing.
          expect(r.output.missingFiles, t).toEqual([]);
          expect(codes(`template:${basename(dirname(t))}`).filter((c) => c.startsWith('MISSING_'))).toEqual([]);
        }
      },
    );

    it(`reports EEVEE by the id this build has (${eeveeOf(build)}), as render setup maps either name to it`, () => {
      // The templates render with EEVEE.
      expect(of('template:VFX').output.renderEngine).toBe(eeveeOf(build));
      expect(of('basic').output.renderEngine).toBe('CYCLES');
    });

    it('compositor: the File Output node, its folder and slots, so the worker expects the files Blender writes', () => {
      const o = of('compositor').output;
      expect(o.compositionNodeTreeEnabled).toBe(true);
      expect(o.haveOutputFileNode).toBe(true);
      expect(o.compositeOutputNodes).toEqual([
        expect.objectContaining({
          name: 'FileOut',
          base_path: '//fileout/',
          format: 'PNG',
          media_type: 'IMAGE',
          slots: [expect.objectContaining({ path: 'beauty_' }), { name: 'mask', path: 'mask' }],
        }),
      ]);
      const final = finalOf(o, build, '1');
      expect(expectedFileNames(final, 1).map((f) => f.relativePath)).toEqual([
        'f_0001.png',
        'beauty_0001.png',
        'mask0001.png',
      ]);
      // A file without a compositor tree reports none.
      expect(of('basic').output.compositionNodeTreeEnabled).toBe(false);
      expect(of('basic').output.compositeOutputNodes).toEqual([]);
    });

    it('denoise: denoising on in a build without a denoiser is reported (the render turns it off)', () => {
      const o = of('denoise').output;
      expect(o.denoisingEnabled).toBe(true);
      expect(codes('denoise')).toContain('DENOISER_UNAVAILABLE');
      expect(of('denoise').warnings.find((w) => w.code === 'DENOISER_UNAVAILABLE')?.blocking).toBe(false);
      expect(codes('basic')).not.toContain('DENOISER_UNAVAILABLE');
      expect(finalOf(o, build, '1').denoisingEnabled).toBe(false);
    });

    it('stereo: left and right views written as individual files', () => {
      const st = of('stereo').output.stereoscopySettings?.[0];
      expect(st).toMatchObject({
        scene_name: 'Scene',
        use_multiview: true,
        views_format: 'STEREO_3D',
        views_output: 'INDIVIDUAL',
      });
      expect(st?.views.filter((v) => v.use).map((v) => [v.name, v.file_suffix])).toEqual([
        ['left', '_L'],
        ['right', '_R'],
      ]);
      const final = finalOf(of('stereo').output, build, '1');
      expect(expectedFileNames(final, 1).map((f) => f.relativePath)).toEqual(['f_0001_L.png', 'f_0001_R.png']);
    });

    it(
      "Blender's own files (bundled assets of another installation, this build's data files) are not missing; " +
        "the user's are",
      () => {
        const r = of('blender-assets');
        expect(r.output.missingFiles).toEqual([['Image', 'Gone', '//textures/gone.png']]);
        expect(codes('blender-assets')).toContain('MISSING_FILES');
        expect(codes('blender-assets')).not.toContain('MISSING_LIBRARIES');
        const text = r.warnings.map((w) => w.message).join('\n');
        expect(text).not.toMatch(/essentials|not-shipped/);
        expect(r.output.hostMissingFilesReport?.join('\n')).not.toMatch(/essentials|not-shipped/);
      },
    );

    it(
      "an add-on's data is found without the add-on: its node tree and node types, its property group, its " + 'engine',
      () => {
        // 5.x keeps bpy.props' ID properties apart from the user's and saves files in a new block layout.
        expect(of('addon-nodes').output.addons).toEqual(['rb_test_nodes']);
        expect(of('addon-nodes').warnings.find((w) => w.code === 'ADDON_REQUIRED')?.message).toMatch(
          /bundled add-on rb_test_nodes, which is not selected: node tree type 'RBTestTreeType' .*node type 'RBTestNode' .*property group 'rb_test_props'/,
        );
        const engine = of('addon-engine');
        expect(engine.output.addons).toEqual(['RBTestNode', 'RBTestTreeType', 'RB_TEST_ENGINE', 'rb_test_props']);
        expect(engine.output.renderEngine).toBeUndefined();
        expect(engine.warnings.find((w) => w.code === 'UNSUPPORTED_ENGINE')).toMatchObject({
          blocking: true,
          message: expect.stringContaining('RB_TEST_ENGINE'),
        });
      },
    );

    it(
      'odd: no camera, a missing library, UDIM and Windows-style paths, unbaked simulations; Python that is ' +
        'not run',
      () => {
        const odd = of('odd');
        expect(codes('odd').sort()).toEqual(['MISSING_CACHE', 'MISSING_FILES', 'MISSING_LIBRARIES', 'NO_CAMERA']);
        expect(
          odd.output.missingFiles?.map(([kind, name, path]) =>
            kind === 'Library' ? [kind, basename(path!)] : [kind, name, path],
          ),
        ).toEqual([
          ['Image', 'Tiles', '//udim/tex.1001.png'],
          ['Image', 'WinPath', '//textures/windows.png'],
          ['Library', expect.stringMatching(/\.lib\.blend$/)],
        ]);
        expect(odd.output.missingCaches?.map((c) => c.type).sort()).toEqual(['CLOTH', 'PARTICLES']);
        expect(odd.output.vramMetadata?.riskFeatures).toMatchObject({
          hasSubdivision: true,
          hasGeometryNodes: true,
          hasHairOrParticles: true,
        });
        expect(codes('autoexec')).toEqual(['AUTOEXEC_DISABLED']);
        expect(of('autoexec').warnings[0]?.message).toMatch(
          /1 auto-run script\(s\) \(autorun\.py\) and 1 Python driver/,
        );
      },
    );

    it('VRAM metadata and the frame, camera and view layer fields the worker plans with', () => {
      const o = of('basic').output;
      expect(o.vramMetadata).toMatchObject({
        schemaVersion: 2,
        sceneName: 'Scene',
        // The factory cube: 8 vertices, 6 quads = 12 triangles.
        geometry: { objectCount: 4, meshObjectCount: 1, vertexCount: 8, faceCount: 6, triangleCount: 12 },
        renderOutput: { viewLayerCount: 2 },
      });
      expect(o.vramMetadata?.geometry.estimatedBytes).toBeGreaterThan(0);
      // Version 2: the whole scene's estimate, inside its band.
      const v = o.vramMetadata!;
      expect(v.estimatedBytes).toBeGreaterThan(0);
      expect(v.estimatedLowBytes).toBeLessThanOrEqual(v.estimatedBytes!);
      expect(v.estimatedHighBytes).toBeGreaterThanOrEqual(v.estimatedBytes!);
      expect(o).toMatchObject({
        renderFrameRange: [1, 24],
        resolution: [64, 48],
        samples: 4,
        activeViewLayer: 'Main',
        outputFormat: 'PNG',
      });
      expect(o.sceneCameras?.map((c) => [c.objectName, c.isSavedActive]).sort()).toEqual([
        ['CamA', true],
        ['CamB', false],
      ]);
      // The cube's keyframes (5.x keeps F-curves in the layered action's channel bags).
      expect(o.animations?.flatMap((a) => a.fcurves)).toEqual([{ data_path: 'location', index: 0 }]);
      expect(o.viewLayers?.map((v) => v.name)).toEqual(['Main', 'Alt']);
    });

    it('keyframed Subdivision levels: the integer curve steps at its keys; the estimate sizes the highest', () => {
      const o = of('stepped-levels').output;
      // 5.x keeps the F-curve in the layered action's channel bags (blender/analysis/action_curves.py).
      expect(o.animations?.flatMap((a) => a.fcurves)).toEqual([
        { data_path: 'modifiers["Subdivision"].render_levels', index: 0, steps: STEPPED_LEVELS },
      ]);
      // Level 3, the highest key, not the saved frame's 0 (968): Suzanne's 1968 corners x 4^2 x 2.
      expect(o.vramMetadata?.geometry.triangleCount).toBe(62_976);
    });
  },
);

describe('analysis across the builds', () => {
  it('gives keyframed Subdivision levels the same memory estimate on every build, to the byte', () => {
    // The model is the same Python on every build; only reading the file differs (5.x: layered actions).
    const builds = testBuilds().filter((b) => !b.missing);
    const first = steppedEstimates.get(builds[0]?.minor ?? '3.4');
    expect(first).toBeGreaterThan(0);
    expect(Object.fromEntries(steppedEstimates)).toEqual(Object.fromEntries(builds.map((b) => [b.minor, first])));
  });
});
