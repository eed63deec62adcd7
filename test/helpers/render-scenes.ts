// What the render tests know of their fixtures without opening them: each fixture scene's metadata
// as the analysis reports it (only what rendering reads), and the capabilities of Debian's Blender
// 3.4 on a machine without GPUs. Fixture names are those of test/helpers/fixtures.ts.
import type { SceneMetadata } from '../../shared/api/scene.js';
import type { RenderCapabilities } from '../../service/domain/final-config.js';
import { type BuildForCapabilities, capabilitiesFor } from '../../service/worker/runtime/devices.js';

/** What Debian's Blender 3.4 reports (devices.test.ts checks it against the real build). */
export const DEBIAN_BUILD: BuildForCapabilities = {
  version: '3.4.1',
  capabilities: { hasOpenImageDenoise: false, cyclesBackends: ['CUDA', 'HIP'], precompiledKernels: [] },
};
export const CAPS: RenderCapabilities = capabilitiesFor(DEBIAN_BUILD, { gpus: [] });

const sceneInfo = {
  name: 'Scene',
  is_active: true,
  world: 'World',
  unit_settings: { system: 'METRIC', scale_length: 1 },
  gravity: [0, 0, -9.81],
};
const cam = (name: string, active: boolean) => ({
  objectName: name,
  dataName: name,
  type: 'PERSP',
  isSavedActive: active,
});
/** The fixtures' scene metadata, as the analysis reports it (only what rendering reads). */
export function sceneOf(fixture: string): SceneMetadata {
  const base: SceneMetadata = {
    scenes: [sceneInfo],
    renderEngine: 'CYCLES',
    resolution: [64, 48],
    resolutionPercentage: 100,
    samples: 4,
    outputFormat: 'PNG',
    renderFrameRange: [1, 4],
    sceneCameras: [cam('Camera', true)],
    activeViewLayer: 'ViewLayer',
    denoisingEnabled: false,
    useCompositing: true,
    compositionNodeTreeEnabled: false,
  };
  if (fixture === 'basic')
    return {
      ...base,
      renderFrameRange: [1, 24],
      sceneCameras: [cam('CamA', true), cam('CamB', false)],
      activeViewLayer: 'Main',
    };
  if (fixture === 'denoise') return { ...base, denoisingEnabled: true, denoiserType: 'OPENIMAGEDENOISE' };
  if (fixture === 'compositor') {
    const node = {
      name: 'FileOut',
      label: '',
      base_path: '//fileout/',
      format: 'PNG',
      slots: [
        { name: 'Image', path: 'beauty_' },
        { name: 'mask', path: 'mask' },
      ],
    };
    return { ...base, compositionNodeTreeEnabled: true, compositeOutputNodes: [node] };
  }
  return base;
}
