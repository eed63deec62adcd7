import { z } from 'zod';
import { CacheType, ComputeDevice, DenoiserType, OutputFormat, OutputMediaType, RenderEngine } from './enums.js';
import { OutputSettings } from './render-config.js';

// The scene metadata object (spec: `analysis.output` and the first part of `finalConfig`).
// Every field is optional: an analysis of an older or damaged file may not know them all.
// Nested shapes are plain objects, so fields a newer analyser adds are dropped, not fatal.

const num = z.number();
const str = z.string();
const bool = z.boolean();

export const MissingCache = z.object({
  type: CacheType,
  sceneName: str,
  issueDescription: str,
  objectName: str,
  objectModifierName: str,
});

export const SceneInfo = z.object({
  name: str,
  is_active: bool,
  world: str.nullable(),
  unit_settings: z.object({ system: str, scale_length: num }),
  gravity: z.array(num),
});

export const AnimationInfo = z.object({
  name: str,
  frame_range: z.array(num),
  fcurves: z.array(
    z.object({
      data_path: str,
      index: num,
      /**
       * On a curve of an integer or boolean property (extension estimate): the frames of the scene's
       * range where its value changes, the value at the range's start first (at most 65).
       */
      steps: z.array(z.object({ frame: num, value: num })).optional(),
    }),
  ),
});

export const CameraInfo = z.object({
  name: str,
  type: str,
  lens: num,
  clip_start: num,
  clip_end: num,
  sensor_width: num,
  sensor_height: num,
  shift_x: num,
  shift_y: num,
  dof: z.object({ use_dof: bool, focus_distance: num, aperture_fstop: num }),
});

export const RenderLayerInfo = z.object({
  name: str,
  use_pass_combined: bool,
  use_pass_z: bool,
  use_pass_normal: bool,
});

export const ColorManagementSettings = z.object({
  display_device: str,
  view_transform: str,
  look: str,
  exposure: num,
  gamma: num,
});

export const LightInfo = z.object({
  name: str,
  type: str,
  color: z.array(num),
  energy: num,
  shadow_soft_size: num,
});

export const SceneCamera = z.object({ objectName: str, dataName: str, type: str, isSavedActive: bool });

export const WorldSettings = z.object({
  name: str,
  ambient_color: z.array(num),
  mist_settings: z.object({ use_mist: bool, start: num, depth: num, falloff: str }),
});

export const StereoView = z.object({ name: str, use: bool, file_suffix: str, camera_suffix: str });

export const StereoscopySettings = z.object({
  scene_name: str,
  use_multiview: bool,
  views_format: str,
  views_output: str.optional(),
  views: z.array(StereoView),
  stereo_3d_format: z.object({
    display_mode: str,
    anaglyph_type: str,
    interlace_type: str,
    use_interlace_swap: bool,
    use_sidebyside_crosseyed: bool,
  }),
});

export const CompositeOutputNode = z.object({
  name: str,
  label: str,
  base_path: str,
  format: str,
  media_type: str.optional(),
  slots: z.array(z.object({ name: str, path: str })),
});

export const ViewLayerInfo = z.object({ name: str, use: bool, isActive: bool });

export const VramMetadata = z.object({
  schemaVersion: z.int(),
  sceneName: str,
  textures: z.object({
    imageCount: z.int(),
    unknownSizeCount: z.int(),
    packedImageCount: z.int(),
    generatedImageCount: z.int(),
    tiledImageCount: z.int(),
    sequenceImageCount: z.int(),
    movieImageCount: z.int(),
    duplicateGroups: z.array(z.object({ key: str, count: z.int(), names: z.array(str), estimatedBytes: num })),
    estimatedBytes: num,
    duplicateWasteBytes: num,
  }),
  geometry: z.object({
    objectCount: z.int(),
    meshObjectCount: z.int(),
    uniqueMeshCount: z.int(),
    vertexCount: z.int(),
    faceCount: z.int(),
    triangleCount: z.int(),
    estimatedBytes: num,
    /** Hair segments and particle instances at render (schemaVersion 2). */
    hairSegmentCount: z.int().optional(),
    particleInstanceCount: z.int().optional(),
  }),
  riskFeatures: z.object({
    hasSubdivision: bool,
    hasMultires: bool,
    hasDisplacement: bool,
    hasGeometryNodes: bool,
    hasHairOrParticles: bool,
    hasVolumes: bool,
  }),
  renderOutput: z.object({ viewLayerCount: z.int(), passComponents: num }),
  /**
   * The memory the render needs, before any render (schemaVersion 2): Cycles' base, the images and the
   * geometry at render (subdivision at its highest keyframed level, hair, instances), with its band.
   */
  estimatedBytes: num.optional(),
  estimatedLowBytes: num.optional(),
  estimatedHighBytes: num.optional(),
  /**
   * What the model cannot size from the file (geometry nodes, volumes, adaptive
   * subdivision...): it raises the band's top.
   */
  unsizedFeatures: z.array(str).optional(),
});

export const AnalysisWarning = z.object({ message: str, blocking: bool, code: str });
export type AnalysisWarning = z.infer<typeof AnalysisWarning>;

export const SceneMetadataShape = {
  fileName: str,
  hostMissingFilesReport: z.array(str),
  hostFileVersion: z.array(num),
  hostVersionForRender: str,
  missingFiles: z.array(z.array(str)),
  missingCaches: z.array(MissingCache),
  renderFrameRange: z.array(num),
  resolution: z.array(num),
  resolutionPercentage: num,
  fileSize: num,
  renderEngine: RenderEngine,
  outputFormat: OutputFormat,
  outputMediaType: OutputMediaType,
  outputSettings: OutputSettings.partial(),
  fps: num,
  fpsBase: num,
  samples: num,
  tileSize: num,
  frameStep: num,
  useTiling: bool,
  denoisingEnabled: bool,
  denoisingUseGpu: bool,
  persistentDataEnabled: bool,
  motionBlurEnabled: bool,
  compositionNodeTreeEnabled: bool,
  useCompositing: bool,
  haveOutputFileNode: bool,
  compositorHasRenderOutputNode: bool,
  useSingleLayer: bool,
  renderDevice: ComputeDevice,
  denoisingDevice: ComputeDevice,
  compositorDevice: ComputeDevice,
  denoiserType: DenoiserType,
  denoisingPrefilter: str,
  denoisingInputPasses: str,
  denoisingQuality: str,
  pathToFileForRender: str,
  activeViewLayer: str,
  scenes: z.array(SceneInfo),
  animations: z.array(AnimationInfo),
  linkedData: z.array(z.object({ name: str, path: str })),
  addons: z.array(str),
  cameras: z.array(CameraInfo),
  renderLayersAndPasses: z.array(RenderLayerInfo),
  colorManagementSettings: ColorManagementSettings,
  lights: z.array(LightInfo),
  sceneCameras: z.array(SceneCamera),
  worldSettings: WorldSettings.nullable(),
  stereoscopySettings: z.array(StereoscopySettings),
  compositeOutputNodes: z.array(CompositeOutputNode),
  viewLayers: z.array(ViewLayerInfo),
  vramMetadata: VramMetadata,
  analysisWarnings: z.array(AnalysisWarning),
} as const;

export const SceneMetadata = z.object(SceneMetadataShape).partial().meta({ id: 'SceneMetadata' });
export type SceneMetadata = z.infer<typeof SceneMetadata>;
