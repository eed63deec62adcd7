// POST /uploads/blobs/query (content-addressed upload extension): which of a project's blobs the
// workspace lacks, with a signed URL per part to send. Blobs the workspace holds are touched in
// the same step, so one answered as held stays until the retention time passes again.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { BlobRef, MissingBlob } from '../../shared/api/blob-upload.js';
import { ROUTES } from '../../shared/routes.js';
import type { ServiceConfig } from '../config.js';
import { ApiError } from '../http/api-error.js';
import { requireAuth } from '../http/auth.js';
import type { BlobReceiver } from '../blobs/blob-receiver.js';
import { blobName, partCount, partExtent } from '../blobs/part-layout.js';
import type { BlobPartUrls } from '../blobs/part-urls.js';
import type { BlobIndex, BlobReferences } from '../ports/blobs.js';
import type { ObjectStorage } from '../ports/storage.js';

/**
 * Body limit of the query and the commit, which name up to 200,000 blobs or files (about 200
 * bytes each with a typical path); every other API body keeps ServiceConfig.bodyLimitBytes.
 */
export const BLOB_BODY_LIMIT_BYTES = 64 * 1024 * 1024;

/** Missing multi-part blobs whose stored parts are listed at once (one storage listing each). */
const LISTINGS_AT_ONCE = 8;

export interface BlobApiDeps {
  config: Pick<ServiceConfig, 'blobPartSizeBytes' | 'uploadUrlTtlSeconds' | 'unpackQuotaBytes'>;
  index: Pick<BlobIndex, 'touchHeld'> & BlobReferences;
  storage: ObjectStorage;
  urls: BlobPartUrls;
  receiver: Pick<BlobReceiver, 'storedParts'>;
}

/** Distinct blobs in the order first named. */
export function distinctInOrder(blobs: readonly BlobRef[]): BlobRef[] {
  const seen = new Map<string, BlobRef>();
  for (const b of blobs) if (!seen.has(blobName(b))) seen.set(blobName(b), { sha256: b.sha256, size: b.size });
  return [...seen.values()];
}

async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
  return out;
}

export const blobQueryRoutes: FastifyPluginAsyncZod<BlobApiDeps> = async (app, deps) => {
  const r = ROUTES.queryBlobs;
  app.post(r.path, { schema: { body: r.body }, bodyLimit: BLOB_BODY_LIMIT_BYTES }, async (req) => {
    const { workspaceId } = requireAuth(req);
    const now = Date.now();
    const asked = distinctInOrder(req.body.blobs);
    const quota = deps.config.unpackQuotaBytes;
    const tooBig = asked.find((b) => b.size > quota);
    if (tooBig) {
      throw new ApiError('PAYLOAD_TOO_LARGE', {
        message: `A blob of ${tooBig.size} bytes is larger than this service's per-job quota of ${quota} bytes: no project holding it can be rendered here.`,
        metadata: { maxBytes: quota, sha256: tooBig.sha256, size: tooBig.size },
      });
    }
    const nonEmpty = asked.filter((b) => b.size > 0);
    const held = new Set((await deps.index.touchHeld(workspaceId, nonEmpty, now)).map(blobName));
    const absent = nonEmpty.filter((b) => !held.has(blobName(b)));
    const partSize = deps.config.blobPartSizeBytes;
    const expiresAt = new Date(now + deps.config.uploadUrlTtlSeconds * 1000);
    const missing = await mapLimited(absent, LISTINGS_AT_ONCE, async (blob): Promise<MissingBlob> => {
      const count = partCount(blob.size, partSize);
      // A one-part blob goes straight to its key; parts of a larger one are kept until all are in.
      const stored = count > 1 ? await deps.receiver.storedParts(workspaceId, blob, partSize) : new Set<number>();
      const parts = Array.from({ length: count }, (_, i) => {
        const partNumber = i + 1;
        const { offset, length } = partExtent(blob, partSize, partNumber)!;
        const uploadUrl = deps.urls.url({ workspaceId, blob, partNumber, partSize }, expiresAt);
        return { partNumber, offset, length, uploadUrl, uploaded: stored.has(partNumber) };
      });
      return { ...blob, parts };
    });
    const heldBytes = asked.reduce((sum, b) => sum + (held.has(blobName(b)) ? b.size : 0), 0);
    return { partSize, expiresAt: expiresAt.toISOString(), held: { count: asked.length - absent.length, bytes: heldBytes }, missing };
  });
};
