import { z } from 'zod';
import {
  ColorDepth,
  ColorManagementPreset,
  ColorMode,
  ComputeDevice,
  ComputeDeviceType,
  DenoiserType,
  ExrCodec,
  OutputFormat,
  OutputMediaType,
  RenderEngine,
  TiffCodec,
} from './enums.js';

/**
 * One frame range: `"5"`, `"1-10"` or `"1-20x2"` (every 2nd frame). Frames are 0..1,048,574,
 * Blender's own limit (MAXFRAME).
 */
export const FrameRange = z
  .string()
  .regex(/^\d{1,7}(-\d{1,7}(x\d{1,7})?)?$/, 'use "N", "A-B" or "A-BxSTEP", e.g. "1-250" or "1-20x2"')
  .refine((s) => {
    const [a, rest] = s.split('-');
    if (rest === undefined) return Number(a) <= 1_048_574;
    const [b, step] = rest.split('x');
    return Number(a) <= Number(b) && Number(b) <= 1_048_574 && (step === undefined || Number(step) >= 1);
  }, 'the range must go upwards within 0-1048574 and a step must be at least 1');

export const OutputSettings = z
  .strictObject({
    colorMode: ColorMode.optional(),
    colorDepth: ColorDepth.optional(),
    exrCodec: ExrCodec.optional(),
    tiffCodec: TiffCodec.optional(),
    /** PNG compression, 0-100 (Blender's `compression`). */
    compression: z.number().min(0).max(100).optional(),
    /** JPEG/WebP quality, 0-100. */
    quality: z.number().min(0).max(100).optional(),
  })
  .meta({ id: 'OutputSettings' });

const Resolution = z.tuple([z.int().min(4).max(65_536), z.int().min(4).max(65_536)]);

/**
 * `requestedRenderConfig` of `POST /jobs/{id}/render`, echoed as the job's `requestedConfig`.
 * Strict: an unknown (e.g. misspelt) field is a 400, not silently ignored. Bounds are this
 * service's decision (the spec shows none) and are listed in docs/reference/api-decisions.md.
 */
export const RequestedRenderConfig = z
  .strictObject({
    colorManagementPreset: ColorManagementPreset,
    frameRanges: z.array(FrameRange).min(1).max(100).optional(),
    notes: z.string().max(4000).optional(),
    hostVersionForRender: z
      .string()
      .regex(/^\d+\.\d+(\.\d+)?$/, 'a version such as "4.2" or "3.4.1"')
      .optional(),
    renderEngine: RenderEngine.optional(),
    compositorDevice: ComputeDevice.optional(),
    computeDeviceType: ComputeDeviceType.optional(),
    gpuCount: z.int().min(0).max(16).optional(),
    sampleCount: z.int().min(1).max(65_536).optional(),
    denoisingEnabled: z.boolean().optional(),
    denoiserType: DenoiserType.optional(),
    denoisingUseGpu: z.boolean().optional(),
    persistentDataEnabled: z.boolean().optional(),
    resolution: Resolution.optional(),
    resolutionPercentage: z.int().min(1).max(1000).optional(),
    outputFormat: OutputFormat.optional(),
    outputMediaType: OutputMediaType.optional(),
    fps: z.int().min(1).max(1000).optional(),
    fpsBase: z.number().gt(0).max(1000).optional(),
    videoOutput: z.boolean().optional(),
    useTiling: z.boolean().optional(),
    tileSize: z.int().min(8).max(16_384).optional(),
    outputSettings: OutputSettings.optional(),
    /** GiB of RAM a worker must have. */
    minimumRam: z.int().min(0).max(4096).optional(),
    activeCamera: z.string().min(1).max(1024).optional(),
    activeViewLayer: z.string().min(1).max(1024).optional(),
  })
  .meta({ id: 'RequestedRenderConfig' });
export type RequestedRenderConfig = z.infer<typeof RequestedRenderConfig>;

/** The job's `requestedConfig`: the same fields, read leniently from stored or remote data. */
export const RequestedConfig = RequestedRenderConfig.partial().loose().meta({ id: 'RequestedConfig' });
export type RequestedConfig = z.infer<typeof RequestedConfig>;

export const StartRenderBody = z
  .strictObject({
    requestedRenderConfig: RequestedRenderConfig,
  })
  .meta({ id: 'StartRenderBody' });
export type StartRenderBody = z.infer<typeof StartRenderBody>;
