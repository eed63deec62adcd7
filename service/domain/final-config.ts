// What a render really uses: the request applied over what validation detected (an omitted
// field takes the detected value), corrected for what this worker's Blender build and devices can
// do. Every correction is reported as an analysis warning and in `finalConfig.notes`.
import type { AnalysisConfig, FinalConfig } from '../../shared/api/analysis.js';
import type { z } from 'zod';
import type { ComputeDeviceType } from '../../shared/api/enums.js';
import type { RequestedConfig } from '../../shared/api/render-config.js';
import type { AnalysisWarning, SceneMetadata } from '../../shared/api/scene.js';
import { normaliseOutputFormat } from './render-config.js';
import { computeExpectedOutputs } from './expected-outputs.js';
import { expandFrameRanges, formatFrameRanges, sceneFrames } from './frame-ranges.js';

type DeviceType = z.infer<typeof ComputeDeviceType>;

/** What the worker that plans the render can offer. */
export interface RenderCapabilities {
  /** Version of the Blender build picked for the render, e.g. "3.4.1". */
  blenderVersion: string;
  /** A note when the requested `hostVersionForRender` was not available. */
  buildNote?: string;
  /** Whether the build's Cycles has OpenImageDenoise (Debian's 3.4 has not). */
  hasOpenImageDenoise: boolean;
  /** GPU backends both present on this machine and compiled into the build (e.g. ["CUDA"]). */
  gpuBackends: readonly DeviceType[];
  /**
   * GPUs one render process uses: finalConfig.gpuCount. Each render slot pins one GPU (planSlots),
   * so 1 when a GPU backend is usable, else 0; more GPUs render more chunks side by side.
   */
  gpuCount: number;
  /** GPUs rendering chunks side by side on this worker (one per slot), for messages. Default gpuCount. */
  parallelGpus?: number;
}

export interface ResolvedRender {
  finalConfig: FinalConfig;
  frames: number[];
  /** Corrections made to the request, for `analysisWarnings` (never blocking). */
  warnings: AnalysisWarning[];
}

const SUPPORTED_ENGINES = new Set(['CYCLES', 'BLENDER_EEVEE', 'BLENDER_EEVEE_NEXT', 'BLENDER_WORKBENCH']);

function warn(code: string, message: string): AnalysisWarning {
  return { code, message, blocking: false };
}

/** The frames to render: the request's ranges, else the scene's own range and step. */
export function framesFor(scene: SceneMetadata, requested: RequestedConfig): number[] {
  if (requested.frameRanges?.length) return expandFrameRanges(requested.frameRanges);
  const range = scene.renderFrameRange ?? [1, 1];
  return sceneFrames(range, scene.frameStep ?? 1);
}

/** The saved active camera, else the first scene camera. */
function defaultCamera(scene: SceneMetadata): string | undefined {
  const cams = scene.sceneCameras ?? [];
  return (cams.find((c) => c.isSavedActive) ?? cams[0])?.objectName;
}

function pickDevice(
  requested: RequestedConfig,
  caps: RenderCapabilities,
  warnings: AnalysisWarning[],
): { type: DeviceType; gpus: number } {
  const want = requested.computeDeviceType;
  if (!want || want === 'CPU') {
    if (requested.gpuCount && requested.gpuCount > 0) {
      warnings.push(warn('GPU_COUNT_IGNORED', `gpuCount ${requested.gpuCount} ignored: the render runs on the CPU`));
    }
    return { type: 'CPU', gpus: 0 };
  }
  if (!caps.gpuBackends.includes(want) || caps.gpuCount === 0) {
    const have = caps.gpuBackends.length ? caps.gpuBackends.join(', ') : 'none';
    warnings.push(
      warn(
        'DEVICE_UNAVAILABLE',
        `${want} is not available on this worker (GPU backends: ${have}, GPUs: ${caps.gpuCount}); rendering on the CPU`,
      ),
    );
    return { type: 'CPU', gpus: 0 };
  }
  const asked = requested.gpuCount ?? caps.gpuCount;
  const gpus = Math.max(1, Math.min(asked, caps.gpuCount));
  if (asked !== gpus) {
    const side =
      caps.parallelGpus && caps.parallelGpus > gpus
        ? ` (this worker's ${caps.parallelGpus} GPUs render separate chunks side by side)`
        : '';
    warnings.push(
      warn(
        'GPU_COUNT_REDUCED',
        `gpuCount ${asked} asked for; each render process uses ${gpus} GPU${gpus === 1 ? '' : 's'}${side}`,
      ),
    );
  }
  return { type: want, gpus };
}

/**
 * The finalConfig of a render. `scene` is the analysis output; `validation` what validation
 * chose (scene, file, add-ons); `requested` the render request (already checked against the scene).
 */
export function resolveFinalConfig(
  scene: SceneMetadata,
  validation: Partial<z.infer<typeof AnalysisConfig>>,
  requestedIn: RequestedConfig,
  caps: RenderCapabilities,
): ResolvedRender {
  const requested = normaliseOutputFormat(requestedIn as never) as RequestedConfig;
  const warnings: AnalysisWarning[] = [];
  if (caps.buildNote) warnings.push(warn('BLENDER_VERSION_SUBSTITUTED', caps.buildNote));
  if (requestedIn.outputFormat && requestedIn.outputFormat !== requested.outputFormat) {
    warnings.push(
      warn(
        'MOVIE_FORMAT_NORMALISED',
        `${requestedIn.outputFormat} renders as PNG frames; ask for videoOutput to get an MP4`,
      ),
    );
  }
  const engine = requested.renderEngine ?? scene.renderEngine ?? 'CYCLES';
  if (!SUPPORTED_ENGINES.has(engine)) warnings.push(warn('UNSUPPORTED_ENGINE', `engine ${engine} is not supported`));

  let denoise = requested.denoisingEnabled ?? scene.denoisingEnabled ?? false;
  const denoiser = requested.denoiserType ?? scene.denoiserType ?? 'OPENIMAGEDENOISE';
  if (denoise && engine === 'CYCLES' && denoiser === 'OPENIMAGEDENOISE' && !caps.hasOpenImageDenoise) {
    denoise = false;
    warnings.push(
      warn(
        'DENOISER_UNAVAILABLE',
        `Blender ${caps.blenderVersion} on this worker has no OpenImageDenoise: denoising turned off`,
      ),
    );
  }
  if (denoise && denoiser === 'OPTIX' && !caps.gpuBackends.includes('OPTIX')) {
    denoise = false;
    warnings.push(warn('DENOISER_UNAVAILABLE', 'the OptiX denoiser needs an OptiX GPU: denoising turned off'));
  }
  const device = pickDevice(requested, caps, warnings);
  const frames = framesFor(scene, requested);
  const outputFormat =
    requested.outputFormat ??
    normaliseOutputFormat({ outputFormat: scene.outputFormat } as never).outputFormat ??
    'PNG';
  const sceneToRender =
    validation.sceneToRender ?? scene.scenes?.find((s) => s.is_active)?.name ?? scene.scenes?.[0]?.name;
  const effective: SceneMetadata = {
    ...scene,
    outputFormat,
    outputMediaType: requested.outputMediaType ?? 'IMAGE',
  };
  const finalConfig: FinalConfig = {
    ...scene,
    analysisWarnings: [...(scene.analysisWarnings ?? []), ...warnings],
    hostVersionForRender: caps.blenderVersion,
    renderEngine: engine as FinalConfig['renderEngine'],
    resolution: requested.resolution ?? scene.resolution,
    resolutionPercentage: requested.resolutionPercentage ?? scene.resolutionPercentage ?? 100,
    samples: requested.sampleCount ?? scene.samples,
    sampleCount: requested.sampleCount ?? scene.samples,
    fps: requested.fps ?? scene.fps ?? 24,
    fpsBase: requested.fpsBase ?? scene.fpsBase ?? 1,
    denoisingEnabled: denoise,
    denoiserType: denoiser,
    denoisingUseGpu: (requested.denoisingUseGpu ?? scene.denoisingUseGpu ?? false) && device.type !== 'CPU',
    persistentDataEnabled: requested.persistentDataEnabled ?? scene.persistentDataEnabled ?? false,
    useTiling: requested.useTiling ?? scene.useTiling,
    tileSize: requested.tileSize ?? scene.tileSize,
    outputFormat,
    outputMediaType: 'IMAGE',
    outputSettings: { ...scene.outputSettings, ...requested.outputSettings },
    renderDevice: device.type === 'CPU' ? 'CPU' : 'GPU',
    compositorDevice: requested.compositorDevice ?? scene.compositorDevice ?? 'CPU',
    computeDeviceType: device.type,
    gpuCount: device.gpus,
    frameRanges: formatFrameRanges(frames),
    frameStep: 1,
    notes: [requested.notes, ...warnings.map((w) => w.message)].filter(Boolean).join('\n'),
    colorManagementPreset: requested.colorManagementPreset ?? 'default',
    minimumRam: requested.minimumRam ?? 0,
    videoOutput: requested.videoOutput ?? false,
    activeCamera: requested.activeCamera ?? defaultCamera(scene),
    activeViewLayer: requested.activeViewLayer ?? scene.activeViewLayer,
    addonsToUse: validation.addonsToUse ?? [],
    bundledAddonPathsToUse: validation.bundledAddonPathsToUse ?? [],
    ...(sceneToRender ? { sceneToRender } : {}),
    ...(validation.pathToFileForRender ? { pathToFileForRender: validation.pathToFileForRender } : {}),
    expectedOutputs: computeExpectedOutputs(effective, frames, sceneToRender ? { sceneName: sceneToRender } : {}),
  };
  return { finalConfig, frames, warnings };
}
