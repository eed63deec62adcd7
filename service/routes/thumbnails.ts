// GET /jobs/{id}/thumbnails and GET /jobs/{id}/thumbnails/image (extension frame-thumbnails): the
// thumbnails the workers stored beside a job's outputs, read from a listing of their folder (the
// key names the frame: service/domain/thumbnails.ts), while the job renders and after. The list
// hands out signed URLs, as the downloads do; the image route answers the bytes itself, for
// clients that hold the key but cannot follow a URL of the store (the tray's daemon). Another
// workspace's job is a 404, as everywhere; its objects are never listed or signed.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { THUMBNAIL_FRAME_HEADER } from '../../shared/api/thumbnails.js';
import { ROUTES } from '../../shared/routes.js';
import { jobOutputPrefix } from '../domain/output-keys.js';
import { parseThumbnailKey, thumbnailFolder, type ThumbnailExt } from '../domain/thumbnails.js';
import { ApiError } from '../http/api-error.js';
import { requireAuth } from '../http/auth.js';
import type { ServiceContext } from '../context.js';
import type { FrameStatsReader } from '../ports/frame-stats.js';
import type { JobRecord } from '../ports/jobs.js';
import { loadJob } from './jobs.js';

export interface ThumbnailRouteDeps {
  ctx: ServiceContext;
  /** The frame statistics, which say which frame finished last. Default none: the highest frame is the latest. */
  frames?: FrameStatsReader;
}

interface Stored {
  frame: number;
  key: string;
  ext: ThumbnailExt;
}

/** Rows of the statistics looked at for the latest frame with a thumbnail (one per slot, and then some). */
const LATEST_ROWS = 32;

/** The job's thumbnails in frame order (one a frame). */
async function storedThumbnails(ctx: ServiceContext, rec: JobRecord): Promise<Stored[]> {
  const byFrame = new Map<number, Stored>();
  for (const { key } of await ctx.storage.list(
    `${thumbnailFolder(jobOutputPrefix(rec.job.workspaceId, rec.job.id))}/`,
  )) {
    const t = parseThumbnailKey(key);
    if (t && !byFrame.has(t.frame)) byFrame.set(t.frame, { ...t, key });
  }
  return [...byFrame.values()].sort((a, b) => a.frame - b.frame);
}

/**
 * The thumbnail of the frame that finished last: the latest statistics rows, newest first, name
 * it (a frame's thumbnail is stored just after its row, so the newest row may have none yet);
 * without rows, the highest frame.
 */
async function latestOf(
  stored: readonly Stored[],
  jobId: string,
  frames: FrameStatsReader | undefined,
): Promise<Stored | undefined> {
  if (stored.length === 0) return undefined;
  const byFrame = new Map(stored.map((s) => [s.frame, s]));
  const rows = frames ? await frames.frameTimes(jobId, { latest: LATEST_ROWS }) : [];
  for (const r of [...rows].sort((a, b) => b.finishedAt.localeCompare(a.finishedAt))) {
    const hit = byFrame.get(r.frame);
    if (hit) return hit;
  }
  return stored.at(-1);
}

/** The shot's frame rate as it plays (fps / fps_base), or null before the render is planned. */
function fpsOf(rec: JobRecord): number | null {
  const fps = rec.job.finalConfig?.fps ?? rec.job.requestedConfig?.fps;
  const base = rec.job.finalConfig?.fpsBase ?? rec.job.requestedConfig?.fpsBase ?? 1;
  return fps && fps > 0 && base > 0 ? Math.round((fps / base) * 1000) / 1000 : null;
}

const IMAGE_TYPES: Readonly<Record<ThumbnailExt, string>> = { jpg: 'image/jpeg', png: 'image/png' };

export const thumbnailRoutes: FastifyPluginAsyncZod<ThumbnailRouteDeps> = async (app, { ctx, frames }) => {
  const list = ROUTES.listJobThumbnails;
  app.get(list.path, { schema: { params: list.params, querystring: list.query } }, async (req) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    const { page, pageSize } = req.query;
    const stored = await storedThumbnails(ctx, rec);
    const expiresAt = new Date(Date.now() + ctx.config.downloadUrlTtlSeconds * 1000);
    const sign = async (s: Stored) => ({
      frame: s.frame,
      url: await ctx.storage.presignGet(s.key, {
        expiresAt,
        fileName: `${rec.job.id.slice(0, 8)}-frame-${s.frame}.${s.ext}`,
      }),
    });
    const latest = await latestOf(stored, rec.job.id, frames);
    return {
      data: {
        jobId: rec.job.id,
        fps: fpsOf(rec),
        latest: latest ? await sign(latest) : null,
        expiresAt: expiresAt.toISOString(),
        thumbnails: await Promise.all(stored.slice((page - 1) * pageSize, page * pageSize).map(sign)),
      },
      pagination: { page, pageSize, total: stored.length, totalPages: Math.ceil(stored.length / pageSize) },
    };
  });

  const one = ROUTES.getJobThumbnail;
  app.get(one.path, { schema: { params: one.params, querystring: one.query } }, async (req, reply) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    const stored = await storedThumbnails(ctx, rec);
    const want = req.query.frame;
    const hit = want === undefined ? await latestOf(stored, rec.job.id, frames) : stored.find((s) => s.frame === want);
    if (!hit)
      throw new ApiError('THUMBNAIL_NOT_FOUND', {
        metadata: { jobId: rec.job.id, ...(want !== undefined ? { frame: want } : {}) },
      });
    const body = await ctx.storage.get(hit.key);
    return (
      reply
        .header('content-type', IMAGE_TYPES[hit.ext])
        .header(THUMBNAIL_FRAME_HEADER, String(hit.frame))
        // A frame rendered again keeps its thumbnail's key: a client asks again rather than trusting a copy long.
        .header('cache-control', 'private, max-age=60')
        .header('x-content-type-options', 'nosniff')
        .send(body)
    );
  });
};
