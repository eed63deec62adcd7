// Rendering a chunk on every build of the matrix (3.4, 4.3, 5.2), as the worker renders: the scene
// analysed by that build, the worker's final config and expected file names, render_setup.py in a
// chunk (`-s -e -a`), the lines read by the worker's progress parser. What a user would check: every
// frame and every compositor File Output file is there where the worker expects it and is a whole
// PNG of the asked size; stereo writes both eyes; denoising a build cannot do is turned off with a
// warning, never a failed frame; EEVEE's either name renders with the build's EEVEE; the device
// report (RB_DEVICE) says what the render really runs on. The warm loop is in render-warm.test.ts.
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseDeviceLine } from '../../blender/render/device-report.js';
import { classifySavedPath } from '../../blender/render/render-invocation.js';
import type { RenderSettings } from '../../blender/render/render-settings.js';
import { usableBuilds } from '../helpers/blender-builds.js';
import * as m from './matrix.js';
import { chunk, expected, plan, setupOnly, useRenderWork, written, type Chunk } from './render-runs.js';

useRenderWork();

describe.each(usableBuilds('render matrix').map((b) => [b.minor, b] as const))(
  'rendering on Blender %s',
  (_minor, build) => {
    const r = new Map<string, Chunk>();
    const get = (key: string) => r.get(key)!;
    const eevee = m.eeveeOf(build);
    const otherEevee = eevee === 'BLENDER_EEVEE' ? 'BLENDER_EEVEE_NEXT' : 'BLENDER_EEVEE';

    beforeAll(async () => {
      const noDenoiseInSettings = (s: RenderSettings) => delete s.denoise;
      await m.pool([
        async () => r.set('chunk', await chunk(build, await plan(build, 'chunk', 'compositor', '1-2'), 1, 2)),
        async () => r.set('multi', await chunk(build, await plan(build, 'multi', 'compositor-multi', '1'), 1, 1)),
        async () => r.set('stereo', await chunk(build, await plan(build, 'stereo', 'stereo', '1'), 1, 1)),
        async () =>
          r.set(
            'denoiseAsked',
            await chunk(
              build,
              await plan(
                build,
                'denoise-asked',
                'denoise',
                '1',
                (s) => (s.denoise = { enabled: true, denoiser: 'OPENIMAGEDENOISE' }),
              ),
              1,
              1,
            ),
          ),
        async () =>
          r.set(
            'denoiseFile',
            await chunk(build, await plan(build, 'denoise-file', 'denoise', '1', noDenoiseInSettings), 1, 1),
          ),
        // Setup only (no frame arguments): EEVEE asked by the other build's name; CUDA, with no GPU here.
        async () =>
          r.set('eevee', await setupOnly(await plan(build, 'eevee', 'basic', '1', (s) => (s.engine = otherEevee)))),
        async () =>
          r.set(
            'cuda',
            await setupOnly(
              await plan(build, 'cuda', 'basic', '1', (s) => (s.device = { type: 'CUDA', allowCpuFallback: true })),
            ),
          ),
      ]);
    }, 600_000);

    it(
      'a chunk writes the camera frames and the File Output files where the worker expects them, and reports ' +
        'each frame',
      async () => {
        const { job, result, lines } = get('chunk');
        expect(result.exitCode, result.lastLines.join('\n')).toBe(0);
        expect(expected(job, [1, 2])).toEqual([
          'composite/FileOut/beauty_0001.png',
          'composite/FileOut/beauty_0002.png',
          'composite/FileOut/mask0001.png',
          'composite/FileOut/mask0002.png',
          'frames/f_0001.png',
          'frames/f_0002.png',
        ]);
        expect(await written(job)).toEqual(expected(job, [1, 2]));
        for (const f of await written(job)) expect(m.pngSize(join(job.dir, f)), f).toEqual([64, 48]);
        expect(m.setupSummary(lines).fileOutputs).toEqual([
          { name: 'FileOut', folder: 'FileOut', basePath: `${job.composite}/FileOut/` },
        ]);
        // What the worker's parser makes of Blender's lines: each frame started, saved and finished once.
        const events = m.eventsOf(lines);
        expect(m.framesStarted(events)).toEqual([1, 2]);
        expect(m.framesFinished(events)).toEqual([1, 2]);
        const saved = m
          .savedPaths(events)
          .map((p) => classifySavedPath(p, { attemptDir: job.frames, compositeDir: job.composite }));
        expect(saved.map((s) => `${s.kind === 'camera' ? 'frames' : 'composite'}/${s.relativePath}`).sort()).toEqual(
          expected(job, [1, 2]),
        );
      },
    );

    it(
      'File Output nodes with sub folders, frame digits, a multilayer EXR and (5.x) path templates: the files ' +
        'the worker expects',
      async () => {
        const { job, result } = get('multi');
        expect(result.exitCode, result.lastLines.join('\n')).toBe(0);
        const want = [
          'composite/Beauty/beauty_0001.png',
          'composite/Beauty/sub/deep_01_v.png',
          'composite/Layers/layers_0001.exr',
          'composite/Named/Scene_64_img0001.png',
          'frames/f_0001.png',
        ];
        expect(expected(job, [1])).toEqual(want);
        expect(await written(job)).toEqual(want);
        for (const f of want.filter((x) => x.endsWith('.png')))
          expect(m.pngSize(join(job.dir, f)), f).toEqual([64, 48]);
        // OpenEXR's magic number.
        expect((await readFile(join(job.dir, 'composite/Layers/layers_0001.exr'))).subarray(0, 4).toString('hex')).toBe(
          '762f3101',
        );
      },
    );

    it('stereo writes the left and right views of each frame', async () => {
      const { job, result } = get('stereo');
      expect(result.exitCode, result.lastLines.join('\n')).toBe(0);
      expect(await written(job)).toEqual(['frames/f_0001_L.png', 'frames/f_0001_R.png']);
      expect(expected(job, [1])).toEqual(['frames/f_0001_L.png', 'frames/f_0001_R.png']);
      for (const f of await written(job)) expect(m.pngSize(join(job.dir, f))).toEqual([64, 48]);
    });

    it('denoising on (asked or from the file) renders without it on a build with no denoiser, says so', async () => {
      for (const key of ['denoiseAsked', 'denoiseFile']) {
        const { job, result, lines } = get(key);
        expect(result.exitCode, `${key}:\n${result.lastLines.join('\n')}`).toBe(0);
        expect(m.setupWarnings(lines).join('\n'), key).toMatch(/no denoiser .*denoising off/);
        expect(m.setupSummary(lines).denoise, key).toBe(false);
        expect(m.pngSize(join(job.frames, 'f_0001.png'))).toEqual([64, 48]);
        expect(lines.join('\n')).not.toMatch(/Failed to denoise|without OpenImageDenoise/);
      }
    });

    it(`${otherEevee} asked sets the build's ${eevee}; a CUDA render with no GPU reports the CPU it uses`, () => {
      const ee = get('eevee');
      expect(ee.result.exitCode, ee.result.lastLines.join('\n')).toBe(0);
      expect(m.setupSummary(ee.lines)).toMatchObject({ engine: eevee, device: 'ENGINE_DEFAULT' });
      expect(ee.lines.map(parseDeviceLine).filter(Boolean)).toEqual([
        { requested: 'CPU', device: 'ENGINE_DEFAULT', gpus: 0 },
      ]);
      const cuda = get('cuda');
      expect(cuda.result.exitCode, cuda.result.lastLines.join('\n')).toBe(0);
      expect(m.setupSummary(cuda.lines)).toMatchObject({ engine: 'CYCLES', device: 'CPU' });
      expect(cuda.lines.map(parseDeviceLine).filter(Boolean)).toEqual([{ requested: 'CUDA', device: 'CPU', gpus: 0 }]);
      expect(m.setupWarnings(cuda.lines).some((w) => /CUDA.*: rendering on the CPU$/.test(w))).toBe(true);
    });
  },
);
