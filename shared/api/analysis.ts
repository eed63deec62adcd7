import { z } from 'zod';
import { ColorManagementPreset, ComputeDeviceType } from './enums.js';
import { DateTime } from './common.js';
import { SceneMetadataShape } from './scene.js';
import { FrameRange } from './render-config.js';

export const AddonRef = z.object({ id: z.string(), name: z.string() });

export const AnalysisConfig = z.object({
  pathToFileForRender: z.string(),
  sceneToRender: z.string(),
  addonsToUse: z.array(AddonRef),
  bundledAddonPathsToUse: z.array(z.string()),
});

export const Analysis = z
  .object({
    id: z.string(),
    fsNodeId: z.string(),
    /** `scene_file` is the only kind of analysis this service runs. */
    type: z.enum(['scene_file']),
    status: z.enum(['created', 'running', 'completed', 'failed']),
    config: AnalysisConfig.partial(),
    output: z.object(SceneMetadataShape).partial().nullable(),
    startedAt: DateTime.nullable(),
    finishedAt: DateTime.nullable(),
    deletedAt: DateTime.nullable(),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .meta({ id: 'Analysis' });
export type Analysis = z.infer<typeof Analysis>;

const ExpectedView = z.object({ name: z.string(), fileSuffix: z.string(), cameraSuffix: z.string() });

export const ExpectedOutputs = z.object({
  schemaVersion: z.int(),
  timelineFrames: z.int(),
  viewMultiplier: z.int(),
  views: z.array(ExpectedView),
  categories: z.array(
    z.object({
      kind: z.enum(['camera', 'composite']),
      format: z.string(),
      views: z.array(ExpectedView),
      expectedFileCount: z.int(),
      nodeIndex: z.int().optional(),
      nodeName: z.string().optional(),
      nodeLabel: z.string().optional(),
      slotName: z.string().optional(),
    }),
  ),
  totals: z.object({ files: z.int(), cameraFiles: z.int(), compositeFiles: z.int() }),
});

/** Scene metadata plus what rendering really used. */
export const FinalConfig = z
  .object({
    ...SceneMetadataShape,
    frameRanges: z.array(FrameRange),
    notes: z.string(),
    colorManagementPreset: ColorManagementPreset,
    computeDeviceType: ComputeDeviceType,
    gpuCount: z.int(),
    sampleCount: z.int(),
    minimumRam: z.int(),
    videoOutput: z.boolean(),
    activeCamera: z.string(),
    addonsToUse: z.array(AddonRef),
    bundledAddonPathsToUse: z.array(z.string()),
    sceneToRender: z.string(),
    expectedOutputs: ExpectedOutputs,
  })
  .partial()
  .meta({ id: 'FinalConfig' });
export type FinalConfig = z.infer<typeof FinalConfig>;
