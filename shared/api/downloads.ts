import { z } from 'zod';
import { Url } from './common.js';

export const OutputType = z.enum(['frame', 'composite']);

export const DownloadOutput = z
  .object({
    url: Url,
    fileName: z.string(),
    relativePath: z.string().optional(),
    view: z.string().nullable(),
    outputType: OutputType,
    compositeNodeName: z.string().optional(),
    legacy: z.boolean(),
  })
  .meta({ id: 'DownloadOutput' });
export type DownloadOutput = z.infer<typeof DownloadOutput>;

export const VideoEntry = z
  .object({
    format: z.string(),
    label: z.string().nullable(),
    expected: z.boolean(),
    available: z.boolean(),
    url: Url.nullable(),
    fps: z.int().gt(0).nullable(),
    segment: z.object({ start: z.int().min(0), end: z.int().min(0) }).nullable(),
  })
  .meta({ id: 'VideoEntry' });
export type VideoEntry = z.infer<typeof VideoEntry>;

/** URL, list of URLs (empty = expected but not ready), or null (not available). */
export const ZipLinks = z.union([Url, z.array(Url), z.null()]);
export type ZipLinks = z.infer<typeof ZipLinks>;
const ZipOutputs = z.union([DownloadOutput, z.array(DownloadOutput), z.null()]);

export const Downloads = z
  .object({
    frames: z.array(Url),
    compositeNodes: z.array(Url),
    frameOutputs: z.array(DownloadOutput).optional(),
    compositeNodeOutputs: z.array(DownloadOutput).optional(),
    transforms: z.object({
      framesZip: ZipLinks,
      compositeNodesZip: ZipLinks,
      framesZipOutputs: ZipOutputs.optional(),
      compositeNodesZipOutputs: ZipOutputs.optional(),
      video: z.record(z.string(), z.array(VideoEntry)),
    }),
  })
  .meta({ id: 'Downloads' });
export type Downloads = z.infer<typeof Downloads>;
