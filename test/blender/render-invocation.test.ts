// The pure parts of a chunk's render (blender/render/): the device a final config asks for on a
// machine without GPUs, where a saved file belongs, the command line and environment of a chunk,
// and the settings render_setup.py reads. No Blender runs here (test/service/worker/render-setup.test.ts
// runs it).
import { describe, expect, it } from 'vitest';
import { resolveFinalConfig } from '../../service/domain/final-config.js';
import { classifySavedPath, renderInvocation } from '../../blender/render/render-invocation.js';
import { compositeFolders, renderSettingsFrom } from '../../blender/render/render-settings.js';
import { CAPS, sceneOf } from '../helpers/render-scenes.js';

describe('device choice at the final-config level', () => {
  it('CUDA asked on a machine without GPUs renders on the CPU, with a warning', () => {
    expect(CAPS.gpuBackends).toEqual([]);
    const { finalConfig } = resolveFinalConfig(
      sceneOf('basic'),
      {},
      { colorManagementPreset: 'default', computeDeviceType: 'CUDA' },
      CAPS,
    );
    expect(finalConfig.computeDeviceType).toBe('CPU');
    expect(finalConfig.analysisWarnings?.map((w) => w.code)).toContain('DEVICE_UNAVAILABLE');
    expect(renderSettingsFrom(finalConfig, { compositeDir: '/tmp/x' }).device).toEqual({ type: 'CPU' });
  });
});

describe('render-invocation helpers (pure)', () => {
  const dirs = { attemptDir: '/w/a1', compositeDir: '/w/a1/composite' };

  it('classifySavedPath: composite first, camera next, anything outside rejected', () => {
    expect(classifySavedPath('/w/a1/composite/FileOut/sub/x_0001.png', dirs)).toEqual({
      kind: 'composite',
      relativePath: 'FileOut/sub/x_0001.png',
    });
    expect(classifySavedPath('/w/a1/f_0001_L.png', dirs)).toEqual({ kind: 'camera', relativePath: 'f_0001_L.png' });
    expect(() => classifySavedPath('/w/a2/f_0001.png', dirs)).toThrow(/outside/);
    expect(() => classifySavedPath('/w/a1/../a2/f_0001.png', dirs)).toThrow(/outside/);
    expect(() => classifySavedPath('/w/a1', dirs)).toThrow(/outside/);
  });

  it('pins GPUs by UUID with CUDA_VISIBLE_DEVICES, or HIP_VISIBLE_DEVICES for HIP; -t before -o', () => {
    const chunk = { start: 5, end: 9, step: 2, frames: [5, 7, 9] };
    const base = { sceneFile: '/w/s.blend', settingsFile: '/w/s.json', attemptDir: '/w/a1', chunk };
    const cuda = renderInvocation({ ...base, gpuUuids: ['GPU-a', 'GPU-b'], deviceType: 'OPTIX', threads: 4 });
    expect(cuda.env).toEqual({ CUDA_VISIBLE_DEVICES: 'GPU-a,GPU-b' });
    expect(cuda.args).toEqual(['-t', '4', '-o', '/w/a1/f_####', '-s', '5', '-e', '9', '-j', '2', '-a']);
    expect(cuda.preScriptArgs).toEqual([]);
    expect(cuda.scriptArgs).toEqual(['--settings', '/w/s.json']);
    expect(renderInvocation({ ...base, gpuUuids: ['0'], deviceType: 'HIP' }).env).toEqual({ HIP_VISIBLE_DEVICES: '0' });
    expect(renderInvocation(base).env).toEqual({});
    expect(() => renderInvocation({ ...base, attemptDir: '/w/take#1' })).toThrow(/#/);
    expect(() => renderInvocation({ ...base, attemptDir: 'rel' })).toThrow(/absolute/);
  });

  it(
    'compositeFolders: safe names, unique ignoring case; settings keep the file view layers unless one was ' + 'asked',
    () => {
      expect(compositeFolders(['a/b', 'a_b', 'A_B', '.hidden'])).toEqual(['a_b', 'a_b-2', 'A_B-3', 'f.hidden']);
      const { finalConfig } = resolveFinalConfig(sceneOf('basic'), {}, { colorManagementPreset: 'aces' }, CAPS);
      expect(finalConfig.activeViewLayer).toBe('Main');
      const s = renderSettingsFrom(finalConfig, {
        compositeDir: '/w/c',
        requested: { colorManagementPreset: 'aces' },
        addonPaths: ['/w/addons'],
      });
      expect(s.viewLayer).toBeUndefined();
      expect(s).toMatchObject({
        camera: 'CamA',
        colorManagement: 'aces',
        addons: { ids: [], paths: ['/w/addons'] },
        device: { type: 'CPU' },
      });
      expect(renderSettingsFrom(finalConfig, { compositeDir: '/w/c' }).viewLayer).toBe('Main');
      expect(() => renderSettingsFrom(finalConfig, { compositeDir: 'c' })).toThrow(/absolute/);
    },
  );
});
