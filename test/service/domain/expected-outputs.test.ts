import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExpectedOutputs } from '../../../shared/api/analysis.js';
import type { SceneMetadata } from '../../../shared/api/scene.js';
import {
  compareOutputs,
  computeExpectedOutputs,
  expectedFileNames,
  framePath,
  withExtension,
} from '../../../service/domain/expected-outputs.js';
import { BlenderLogParser } from '../../../blender/render/progress-parser.js';

const stereo3d = {
  display_mode: 'ANAGLYPH',
  anaglyph_type: 'RED_CYAN',
  interlace_type: 'ROW_INTERLEAVED',
  use_interlace_swap: false,
  use_sidebyside_crosseyed: false,
};
const view = (name: string, suffix: string, use = true) => ({ name, use, file_suffix: suffix, camera_suffix: suffix });

/** The scene of test/fixtures/logs/blender-3.4-stereo-fileoutput.txt, as analyze.py reports it. */
const stereoScene: SceneMetadata = {
  outputFormat: 'PNG',
  useCompositing: true,
  compositionNodeTreeEnabled: true,
  scenes: [
    {
      name: 'Scene',
      is_active: true,
      world: 'World',
      unit_settings: { system: 'METRIC', scale_length: 1 },
      gravity: [0, 0, -9.81],
    },
  ],
  stereoscopySettings: [
    {
      scene_name: 'Scene',
      use_multiview: true,
      views_format: 'STEREO_3D',
      views_output: 'INDIVIDUAL',
      views: [view('left', '_L'), view('right', '_R')],
      stereo_3d_format: stereo3d,
    },
  ],
  compositeOutputNodes: [
    {
      name: 'File Output',
      label: '',
      base_path: '/tmp/y/comp/',
      format: 'PNG',
      slots: [
        { name: 'Image', path: 'beauty_' },
        { name: 'mask', path: 'mask' },
      ],
    },
  ],
};

describe('Blender file naming', () => {
  it('replaces the last run of # in the file name, or appends 4 digits', () => {
    expect(framePath('f_####', 1)).toBe('f_0001');
    expect(framePath('beauty_', 12)).toBe('beauty_0012');
    expect(framePath('mask', 3)).toBe('mask0003');
    expect(framePath('sub/shot_##_v', 9)).toBe('sub/shot_09_v');
    expect(framePath('a##/b_###', 7)).toBe('a##/b_007');
    expect(framePath('f_##', 12345)).toBe('f_12345');
  });

  it('appends the format extension unless one is there', () => {
    expect(withExtension('img_09.ext', 'TIFF')).toBe('img_09.ext.tif');
    expect(withExtension('f_0001.JPEG', 'JPEG')).toBe('f_0001.JPEG');
    expect(withExtension('f_0001', 'OPEN_EXR_MULTILAYER')).toBe('f_0001.exr');
  });
});

describe('computeExpectedOutputs', () => {
  it('counts a mono render without compositor outputs', () => {
    const out = computeExpectedOutputs({ outputFormat: 'PNG' }, [1, 2, 3]);
    expect(ExpectedOutputs.parse(out)).toEqual(out);
    expect(out).toEqual({
      schemaVersion: 1,
      timelineFrames: 3,
      viewMultiplier: 1,
      views: [],
      categories: [{ kind: 'camera', format: 'PNG', views: [], expectedFileCount: 3 }],
      totals: { files: 3, cameraFiles: 3, compositeFiles: 0 },
    });
    expect(expectedFileNames({ outputFormat: 'PNG' }, 1)).toEqual([
      { kind: 'camera', relativePath: 'f_0001.png', view: null },
    ]);
  });

  it('counts stereo views per camera output and per File Output slot', () => {
    const out = computeExpectedOutputs(stereoScene, [1, 2, 2]);
    expect(out.timelineFrames).toBe(2);
    expect(out.viewMultiplier).toBe(2);
    expect(out.views.map((v) => v.fileSuffix)).toEqual(['_L', '_R']);
    expect(out.categories.map((c) => [c.kind, c.slotName ?? null, c.expectedFileCount])).toEqual([
      ['camera', null, 4],
      ['composite', 'beauty_', 4],
      ['composite', 'mask', 4],
    ]);
    expect(out.categories[1]).toMatchObject({ nodeIndex: 0, nodeName: 'File Output', nodeLabel: '', format: 'PNG' });
    expect(out.totals).toEqual({ files: 12, cameraFiles: 4, compositeFiles: 8 });
  });

  it('matches, name for name, the files Blender 3.4 saved in the captured stereo log', () => {
    const log = readFileSync(
      join(import.meta.dirname, '../../fixtures/logs/blender-3.4-stereo-fileoutput.txt'),
      'utf8',
    );
    const saved = new BlenderLogParser()
      .lines(log)
      .flatMap((e) => (e.type === 'saved' ? [e.path] : []))
      .map((p) => (p.startsWith('/tmp/y/comp/') ? `comp/${relative('/tmp/y/comp', p)}` : relative('/tmp/y', p)));
    const expected = [1, 2].flatMap((f) =>
      expectedFileNames(stereoScene, f).map((e) => (e.kind === 'camera' ? e.relativePath : `comp/${e.relativePath}`)),
    );
    expect(compareOutputs(expected, saved)).toEqual({ missing: [], duplicated: [], unexpected: [] });
    expect(expectedFileNames(stereoScene, 1).map((e) => [e.relativePath, e.view])).toEqual([
      ['f_0001_L.png', 'left'],
      ['f_0001_R.png', 'right'],
      ['beauty_0001_L.png', 'left'],
      ['beauty_0001_R.png', 'right'],
      ['mask0001_L.png', 'left'],
      ['mask0001_R.png', 'right'],
    ]);
  });

  it('names multilayer EXR and # slot paths as Blender 3.4 wrote them', () => {
    // Measured: -o out/img_##.ext -F TIFF, a multilayer node at /tmp/z/ml/layers_, a JPEG node slot sub/shot_##_v.
    const scene: SceneMetadata = {
      outputFormat: 'TIFF',
      compositeOutputNodes: [
        {
          name: 'ML',
          label: 'layers',
          base_path: '/tmp/z/ml/layers_',
          format: 'OPEN_EXR_MULTILAYER',
          slots: [
            { name: 'beauty', path: 'beauty' },
            { name: 'alpha', path: 'alpha' },
          ],
        },
        {
          name: 'JPG',
          label: '',
          base_path: '/tmp/z/j',
          format: 'JPEG',
          slots: [{ name: 'Image', path: 'sub/shot_##_v' }],
        },
      ],
    };
    expect(expectedFileNames(scene, 9, { cameraPattern: 'img_##.ext' }).map((f) => f.relativePath)).toEqual([
      'img_09.ext.tif',
      'layers_0009.exr',
      'sub/shot_09_v.jpg',
    ]);
    expect(computeExpectedOutputs(scene, [9, 10]).totals).toEqual({ files: 6, cameraFiles: 2, compositeFiles: 4 });
  });

  it('names a stereo multilayer EXR per view, as Blender 3.4 to 5.2 write it (test/blender/render-matrix)', () => {
    const scene: SceneMetadata = {
      ...stereoScene,
      compositeOutputNodes: [
        {
          name: 'ML',
          label: '',
          base_path: '/tmp/z/ml/layers_',
          format: 'OPEN_EXR_MULTILAYER',
          slots: [{ name: 'beauty', path: 'beauty' }],
        },
      ],
    };
    const names = expectedFileNames(scene, 1)
      .filter((f) => f.kind === 'composite')
      .map((f) => [f.relativePath, f.view]);
    expect(names).toEqual([
      ['layers_0001_L.exr', 'left'],
      ['layers_0001_R.exr', 'right'],
    ]);
  });

  it('ignores disabled views, extra views in STEREO_3D setup, and packed stereo files', () => {
    const withViews = (
      views_format: string,
      views_output: string,
      views: ReturnType<typeof view>[],
    ): SceneMetadata => ({
      ...stereoScene,
      stereoscopySettings: [
        { scene_name: 'Scene', use_multiview: true, views_format, views_output, views, stereo_3d_format: stereo3d },
      ],
    });
    const three = [view('left', '_L'), view('right', '_R'), view('center', '_C')];
    expect(computeExpectedOutputs(withViews('STEREO_3D', 'INDIVIDUAL', three), [1]).viewMultiplier).toBe(2);
    expect(computeExpectedOutputs(withViews('MULTIVIEW', 'INDIVIDUAL', three), [1]).viewMultiplier).toBe(3);
    const oneOn = computeExpectedOutputs(
      withViews('MULTIVIEW', 'INDIVIDUAL', [view('left', '_L'), view('right', '_R', false)]),
      [1],
    );
    expect(oneOn.viewMultiplier).toBe(1);
    expect(
      expectedFileNames(withViews('MULTIVIEW', 'INDIVIDUAL', [view('left', '_L'), view('right', '_R', false)]), 1)[0]
        ?.relativePath,
    ).toBe('f_0001.png');
    const packed = computeExpectedOutputs(withViews('STEREO_3D', 'STEREO_3D', three), [1, 2]);
    expect(packed.categories[0]).toMatchObject({ kind: 'camera', views: [], expectedFileCount: 2 });
    expect(packed.categories[1]?.expectedFileCount).toBe(4);
  });

  it('expects no compositor files when compositing is off, and PNG frames for movie formats', () => {
    const off = computeExpectedOutputs({ ...stereoScene, useCompositing: false, outputFormat: 'FFMPEG' }, [1]);
    expect(off.categories).toHaveLength(1);
    expect(off.categories[0]?.format).toBe('PNG');
    expect(off.totals).toEqual({ files: 2, cameraFiles: 2, compositeFiles: 0 });
  });
});

describe('compareOutputs', () => {
  it('reports missing, duplicated and unexpected files', () => {
    expect(compareOutputs(['a', 'b', 'c'], ['a', 'a', 'c', 'z'])).toEqual({
      missing: ['b'],
      duplicated: ['a'],
      unexpected: ['z'],
    });
  });
});
