import type { DownloadOutput, Downloads, VideoEntry } from '../../shared/api/downloads.js';
import type { JobStatus } from '../../shared/job-status.js';
import type { JobRecord, OutputFile } from '../ports/jobs.js';
import type { ObjectStorage } from '../ports/storage.js';

const IN_RENDER: ReadonlySet<JobStatus> = new Set(['booting', 'rendering', 'finalizing', 'debugging', 'suspended']);

/**
 * The downloads answer. Before completion every list is empty; while a render runs the zips
 * read `[]` ("expected, not ready") and the requested MP4 is listed as expected but unavailable.
 */
export async function buildDownloads(rec: JobRecord, storage: ObjectStorage, ttlSeconds: number): Promise<Downloads> {
  const { job, internal } = rec;
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  const sign = (key: string, fileName: string) => storage.presignGet(key, { expiresAt, fileName });
  const wantsVideo = job.requestedConfig?.videoOutput === true;
  const fps = job.finalConfig?.fps ?? job.requestedConfig?.fps ?? null;
  const compositeExpected = (job.finalConfig?.expectedOutputs?.totals.compositeFiles ?? 0) > 0;

  const outputs = job.status === 'completed' && !job.output?.isDeletedForClient ? internal.outputs : undefined;
  if (!outputs) {
    const rendering = IN_RENDER.has(job.status);
    return {
      frames: [],
      compositeNodes: [],
      frameOutputs: [],
      compositeNodeOutputs: [],
      transforms: {
        framesZip: rendering ? [] : null,
        compositeNodesZip: rendering && compositeExpected ? [] : null,
        video:
          rendering && wantsVideo
            ? {
                mp4: [
                  {
                    format: 'mp4',
                    label: null,
                    expected: true,
                    available: false,
                    url: null,
                    fps: fps && fps > 0 ? Math.round(fps) : null,
                    segment: null,
                  },
                ],
              }
            : {},
      },
    };
  }

  const entry = async (o: OutputFile): Promise<DownloadOutput> => ({
    url: await sign(o.key, o.fileName),
    fileName: o.fileName,
    ...(o.relativePath !== undefined ? { relativePath: o.relativePath } : {}),
    view: o.view,
    outputType: o.outputType,
    ...(o.compositeNodeName !== undefined ? { compositeNodeName: o.compositeNodeName } : {}),
    legacy: false,
  });
  const frameOutputs = await Promise.all(outputs.frames.map(entry));
  const compositeNodeOutputs = await Promise.all(outputs.composites.map(entry));
  const zip = async (key: string | null, fileName: string, outputType: 'frame' | 'composite') =>
    key
      ? { url: await sign(key, fileName), fileName, relativePath: fileName, view: null, outputType, legacy: false }
      : null;
  const framesZip = await zip(outputs.framesZipKey, `${job.id}-frames.zip`, 'frame');
  const compositesZip = await zip(outputs.compositesZipKey, `${job.id}-composites.zip`, 'composite');

  const video: Record<string, VideoEntry[]> = {};
  for (const v of outputs.videos) {
    const url = v.key ? await sign(v.key, v.key.split('/').pop()!) : null;
    (video[v.format] ??= []).push({
      format: v.format,
      label: v.label,
      expected: wantsVideo,
      available: url !== null,
      url,
      fps: v.fps,
      segment: v.segment,
    });
  }
  return {
    frames: frameOutputs.map((o) => o.url),
    compositeNodes: compositeNodeOutputs.map((o) => o.url),
    frameOutputs,
    compositeNodeOutputs,
    transforms: {
      framesZip: framesZip?.url ?? null,
      compositeNodesZip: compositesZip?.url ?? null,
      framesZipOutputs: framesZip,
      compositeNodesZipOutputs: compositesZip,
      video,
    },
  };
}
