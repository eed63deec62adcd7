// A job's frame thumbnails for the job window (extension frame-thumbnails of the service): the
// list, with each image's URL on the daemon, and the image itself, fetched from the service with
// the daemon's API key and passed through. The window never holds the key, and needs no image
// source beyond the daemon: its CSP stays as tight as it is. Service errors pass through.
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { JobIdParams } from '../../shared/api/job.js';
import { THUMBNAIL_FRAME_HEADER, THUMBNAILS_MAX_PAGE_SIZE } from '../../shared/api/thumbnails.js';
import { DAEMON_ROUTES } from '../../shared/daemon/api.js';
import { DAEMON_MAX_THUMBNAILS, DaemonThumbnailQuery, type DaemonThumbnail } from '../../shared/daemon/job-schemas.js';
import { DaemonError } from '../errors.js';
import type { ClientProvider } from '../ports.js';

export interface ThumbnailRouteDeps {
  clients: ClientProvider;
}

const IMAGE = /^image\/(jpeg|png)\b/;

export const thumbnailRoutes: FastifyPluginAsyncZod<ThumbnailRouteDeps> = async (app, { clients }) => {
  const list = DAEMON_ROUTES.listJobThumbnails;
  app.get(list.path, { schema: { params: JobIdParams, response: { 200: list.response } } }, async (req) => {
    const { id } = req.params;
    const client = await clients.client();
    const own = (frame: number): DaemonThumbnail => ({
      frame,
      url: `/jobs/${encodeURIComponent(id)}/thumbnails/image?frame=${frame}`,
    });
    const first = await client.listJobThumbnails(id, { pageSize: THUMBNAILS_MAX_PAGE_SIZE });
    const frames = first.data.thumbnails.map((t) => t.frame);
    const pages = Math.min(first.pagination.totalPages, Math.ceil(DAEMON_MAX_THUMBNAILS / THUMBNAILS_MAX_PAGE_SIZE));
    for (let page = 2; page <= pages; page++)
      frames.push(
        ...(await client.listJobThumbnails(id, { page, pageSize: THUMBNAILS_MAX_PAGE_SIZE })).data.thumbnails.map(
          (t) => t.frame,
        ),
      );
    const latest = first.data.latest;
    return {
      jobId: id,
      fps: first.data.fps,
      latest: latest ? own(latest.frame) : null,
      thumbnails: frames.map(own),
      total: first.pagination.total,
    };
  });

  const image = DAEMON_ROUTES.getJobThumbnail;
  app.get(image.path, { schema: { params: JobIdParams, querystring: DaemonThumbnailQuery } }, async (req, reply) => {
    const client = await clients.client();
    const t = await client.jobThumbnail(req.params.id, req.query.frame === undefined ? {} : { frame: req.query.frame });
    // Only an image reaches the window, whatever a service answers.
    if (!IMAGE.test(t.contentType)) {
      await t.body.cancel();
      throw new DaemonError(
        'SERVICE_UNREACHABLE',
        `The render service answered a thumbnail with ${t.contentType}: check that the service URL points at ` +
          `a renderbridge-compatible service.`,
      );
    }
    return reply
      .header('content-type', t.contentType)
      .header(THUMBNAIL_FRAME_HEADER, String(t.frame))
      .header('x-content-type-options', 'nosniff')
      .send(Readable.fromWeb(t.body as WebReadableStream<Uint8Array>));
  });
};
