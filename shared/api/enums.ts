import { z } from 'zod';

// The spec shows one example value per enum ("full enumerations: not shown").
// These lists are the values Blender itself accepts for the matching setting, so a
// request is rejected only when Blender could not honour it. Enums are case-sensitive.

export const ColorManagementPreset = z.enum(['default', 'aces']);
export const RenderEngine = z.enum(['CYCLES', 'BLENDER_EEVEE', 'BLENDER_EEVEE_NEXT', 'BLENDER_WORKBENCH']);
export const ComputeDevice = z.enum(['CPU', 'GPU']);
export const ComputeDeviceType = z.enum(['CPU', 'CUDA', 'OPTIX', 'HIP', 'METAL', 'ONEAPI']);
export const DenoiserType = z.enum(['OPTIX', 'OPENIMAGEDENOISE']);
/** Image formats, plus Blender's movie formats, which renders normalise to PNG frames (render rule 4). */
export const OutputFormat = z.enum([
  'PNG',
  'JPEG',
  'JPEG2000',
  'BMP',
  'TARGA',
  'TARGA_RAW',
  'TIFF',
  'OPEN_EXR',
  'OPEN_EXR_MULTILAYER',
  'HDR',
  'WEBP',
  'FFMPEG',
  'AVI_JPEG',
  'AVI_RAW',
]);
export const MOVIE_OUTPUT_FORMATS: ReadonlySet<z.infer<typeof OutputFormat>> = new Set([
  'FFMPEG',
  'AVI_JPEG',
  'AVI_RAW',
]);
export const OutputMediaType = z.enum(['IMAGE', 'MULTI_LAYER_IMAGE', 'VIDEO']);
export const ColorMode = z.enum(['BW', 'RGB', 'RGBA']);
/** A string, as in Blender's `image_settings.color_depth`. */
export const ColorDepth = z.enum(['8', '10', '12', '16', '32']);
export const ExrCodec = z.enum(['NONE', 'PXR24', 'ZIP', 'PIZ', 'RLE', 'ZIPS', 'B44', 'B44A', 'DWAA', 'DWAB']);
export const TiffCodec = z.enum(['NONE', 'DEFLATE', 'LZW', 'PACKBITS']);
export const CacheType = z.enum([
  'CLOTH',
  'SOFT_BODY',
  'FLUID',
  'DYNAMIC_PAINT',
  'RIGID_BODY',
  'PARTICLES',
  'HAIR',
  'ALEMBIC',
]);
export const FailedReasonType = z.enum(['VALIDATION_FAILED', 'RENDER_FAILED', 'INTERNAL_ERROR']);
