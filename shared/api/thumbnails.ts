// Extension frame-thumbnails: a small image of each finished frame of a job, made by the worker
// as the frame finishes and stored beside the job's outputs, listed with signed URLs (as outputs
// are served) and served one at a time; the dashboard's strip and flip-book and the tray's job
// window show them.
import { z } from 'zod';
import { DateTime, Url, Uuid } from './common.js';

/** Longest side of a thumbnail, in pixels (a frame already within it is its own thumbnail). */
export const THUMBNAIL_MAX_SIDE = 256;
/** Most thumbnails one page lists: each is a signed URL. */
export const THUMBNAILS_MAX_PAGE_SIZE = 1000;

/** Frame numbers as frame ranges take them (shared/api/render-config.ts). */
const FrameNumber = z.int().min(0).max(1_048_574);

export const ThumbnailsQuery = z.strictObject({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(THUMBNAILS_MAX_PAGE_SIZE).default(200),
});
export type ThumbnailsQuery = z.input<typeof ThumbnailsQuery>;

export const ThumbnailQuery = z.strictObject({
  /** The frame whose thumbnail to serve. Default: the frame that finished last. */
  frame: z.coerce.number().pipe(FrameNumber).optional(),
});
export type ThumbnailQuery = z.input<typeof ThumbnailQuery>;

export const Thumbnail = z
  .object({
    frame: FrameNumber,
    /** A signed, expiring URL of the image (JPEG or PNG), as output downloads are. */
    url: Url,
  })
  .meta({ id: 'Thumbnail' });
export type Thumbnail = z.infer<typeof Thumbnail>;

export const ThumbnailList = z
  .object({
    data: z.object({
      jobId: Uuid,
      /** The shot's frame rate (fps / fps_base), for a flip-book; null until the render is planned. */
      fps: z.number().gt(0).nullable(),
      /**
       * Of every thumbnail of the job, not only this page's: the one of the frame that finished last
       * (by the frame statistics; without them the highest frame); null when none.
       */
      latest: Thumbnail.nullable(),
      /** When the URLs of this answer stop working. */
      expiresAt: DateTime,
      /** In frame order. */
      thumbnails: z.array(Thumbnail),
    }),
    pagination: z.object({
      page: z.int().min(1),
      pageSize: z.int().min(1).max(THUMBNAILS_MAX_PAGE_SIZE),
      total: z.int().min(0),
      totalPages: z.int().min(0),
    }),
  })
  .meta({ id: 'ThumbnailList' });
export type ThumbnailList = z.infer<typeof ThumbnailList>;

/** GET /jobs/{id}/thumbnails/image answers the image's bytes (image/jpeg or image/png). */
export const ThumbnailImage = z.string().meta({
  id: 'ThumbnailImage',
  format: 'binary',
  description: 'The image (JPEG or PNG); the X-Thumbnail-Frame header names its frame.',
});

/** The header that names the frame GET /jobs/{id}/thumbnails/image served (the latest one when none was asked for). */
export const THUMBNAIL_FRAME_HEADER = 'x-thumbnail-frame';
