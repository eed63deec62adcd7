// POST /uploads/blobs/query (content-addressed upload extension): which of a project's blobs the
// workspace lacks, with a signed URL per part to send. Blobs the workspace holds are touched in
// the same step, so one answered as held stays until the retention time passes again.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { MAX_PARTS_PER_QUERY_ANSWER, type BlobRef, type MissingBlob } from '../../shared/api/blob-upload.js';
import { ROUTES } from '../../shared/routes.js';
import type { ServiceConfig } from '../config.js';
import { ApiError } from '../http/api-error.js';
import { requireAuth } from '../http/auth.js';
import type { BlobReceiver } from '../blobs/blob-receiver.js';
import { blobName, partCount, partExtent } from '../blobs/part-layout.js';
import type { BlobPartUrls } from '../blobs/part-urls.js';
import type { BlobIndex, BlobReferences } from '../ports/blobs.js';
import type { ObjectStorage } from '../ports/storage.js';
import type { StorageQuota } from '../http/storage-quota.js';
import { applyDecision } from '../http/rate-limit.js';
import type { RateLimiter } from '../ports/rate-limit.js';
import type { InFlightLimit } from '../http/in-flight.js';

/**
 * Body limit of the query and the commit, which name up to 200,000 blobs or files (about 200
 * bytes each with a typical path); every other API body keeps ServiceConfig.bodyLimitBytes.
 */
export const BLOB_BODY_LIMIT_BYTES = 64 * 1024 * 1024;

/** Missing multi-part blobs whose stored parts are listed at once (one storage listing each). */
const LISTINGS_AT_ONCE = 8;

/**
 * Work done between two turns of the event loop: blobs touched, URLs signed. A full answer signs
 * a thousand URLs and a query touches up to 200,000 blobs; done in one go either would hold every
 * other tenant's request for tens of milliseconds (bench:attack). About 2 ms a slice here.
 */
const SLICE = 128;

/**
 * What a query costs its key's request budget beyond the one request the auth hook charged: one
 * more per this many blobs named and per this many URLs signed, so a key's budget bounds the work
 * it causes, not only its requests. A full answer (1,000 URLs) costs 11; a project of 200,000
 * files, 200 on its first page: within the default budget of 1,200 a minute.
 */
export const BLOBS_PER_TOKEN = 1000;
export const URLS_PER_TOKEN = 100;

export interface BlobApiDeps {
  config: Pick<ServiceConfig, 'blobPartSizeBytes' | 'uploadUrlTtlSeconds' | 'unpackQuotaBytes'>;
  /** Most parts (signed URLs) one answer lists. Default MAX_PARTS_PER_QUERY_ANSWER (10,000); tests lower it. */
  maxPartsPerAnswer?: number;
  /** The workspace storage quota: what a query lacks must fit in it. Default none: unlimited. */
  quota?: StorageQuota;
  index: Pick<BlobIndex, 'touchHeld'> & BlobReferences;
  storage: ObjectStorage;
  urls: BlobPartUrls;
  receiver: Pick<BlobReceiver, 'storedParts'>;
  /** The API's per-key budgets, charged by the work a query asks for. Default none: requests only. */
  limiter?: Pick<RateLimiter, 'take'>;
  /** Queries and commits of one key in progress at once. Default none: unlimited. */
  inFlight?: InFlightLimit;
}

/** Distinct blobs in the order first named. */
export function distinctInOrder(blobs: readonly BlobRef[]): BlobRef[] {
  const seen = new Map<string, BlobRef>();
  for (const b of blobs) {
    const name = blobName(b);
    if (!seen.has(name)) seen.set(name, { sha256: b.sha256, size: b.size });
  }
  return [...seen.values()];
}

/** `touchHeld` slice by slice, yielding between slices (each slice is a transaction of its own). */
async function touchInSlices(
  index: Pick<BlobIndex, 'touchHeld'>,
  workspaceId: string,
  blobs: readonly BlobRef[],
  now: number,
): Promise<BlobRef[]> {
  const held: BlobRef[] = [];
  for (let i = 0; i < blobs.length; i += SLICE * 4) {
    if (i > 0) await nextTurn();
    held.push(...(await index.touchHeld(workspaceId, blobs.slice(i, i + SLICE * 4), now)));
  }
  return held;
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

/** A missing blob to list, where its listing starts, and its first index in the query's blobs. */
interface Planned {
  blob: BlobRef;
  index: number;
  firstPart: number;
  count: number;
}

/**
 * Which parts this answer lists: blob by blob in the order asked, at most `cap` parts in all. Pure
 * arithmetic over part counts, so the cost of a hostile query (2,000 blobs of 64 GiB) is the number
 * of blobs, never the number of their parts.
 */
export function planPage(
  absent: readonly { blob: BlobRef; index: number }[],
  partSize: number,
  firstPart: number,
  cap: number,
): { listed: Planned[]; continueFrom: { index: number; partNumber: number } | null } {
  const listed: Planned[] = [];
  let room = cap;
  for (const [i, { blob, index }] of absent.entries()) {
    const start = i === 0 && index === 0 ? firstPart : 1;
    const left = partCount(blob.size, partSize) - start + 1;
    if (room === 0) return { listed, continueFrom: { index, partNumber: start } };
    const count = Math.min(left, room);
    listed.push({ blob, index, firstPart: start, count });
    room -= count;
    if (count < left) return { listed, continueFrom: { index, partNumber: start + count } };
  }
  return { listed, continueFrom: null };
}

export const blobQueryRoutes: FastifyPluginAsyncZod<BlobApiDeps> = async (app, deps) => {
  const r = ROUTES.queryBlobs;
  const cap = deps.maxPartsPerAnswer ?? MAX_PARTS_PER_QUERY_ANSWER;
  app.post(
    r.path,
    {
      schema: { body: r.body },
      bodyLimit: BLOB_BODY_LIMIT_BYTES,
      ...(deps.inFlight ? { onRequest: deps.inFlight.hook } : {}),
    },
    async (req, reply) => {
      const { workspaceId, keyId } = requireAuth(req);
      const charge = async (cost: number) => {
        if (cost < 1 || !deps.limiter) return;
        const refused = applyDecision(await deps.limiter.take(keyId, cost), reply);
        if (refused) throw refused;
      };
      const now = Date.now();
      const asked = distinctInOrder(req.body.blobs);
      const quota = deps.config.unpackQuotaBytes;
      const partSize = deps.config.blobPartSizeBytes;
      const tooBig = asked.find((b) => b.size > quota);
      if (tooBig) {
        throw new ApiError('PAYLOAD_TOO_LARGE', {
          message:
            `A blob of ${tooBig.size} bytes is larger than this service's per-job quota of ${quota} bytes: no ` +
            `project holding it can be rendered here.`,
          metadata: { maxBytes: quota, sha256: tooBig.sha256, size: tooBig.size },
        });
      }
      const firstPart = req.body.firstPart ?? 1;
      const first = req.body.blobs[0];
      if (firstPart > 1 && (!first || firstPart > partCount(first.size, partSize))) {
        throw new ApiError('VALIDATION_ERROR', {
          details: [
            {
              code: 'too_big',
              path: ['body', 'firstPart'],
              message:
                `firstPart ${firstPart} is past the parts of the first blob ` +
                `(${first ? partCount(first.size, partSize) : 0} of ${partSize} bytes): use the continueFrom ` +
                `of the previous answer`,
            },
          ],
        });
      }
      const nonEmpty = asked.filter((b) => b.size > 0);
      await charge(Math.floor(nonEmpty.length / BLOBS_PER_TOKEN));
      const held = new Set((await touchInSlices(deps.index, workspaceId, nonEmpty, now)).map(blobName));
      const absent = nonEmpty.filter((b) => !held.has(blobName(b)));
      // No project of one job holds more than the quota, so neither can what it lacks: checked on
      // sizes alone, before a single URL is signed.
      const missingBytes = absent.reduce((sum, b) => sum + b.size, 0);
      if (missingBytes > quota) {
        throw new ApiError('PAYLOAD_TOO_LARGE', {
          message:
            `The blobs this query lacks hold ${missingBytes} bytes, more than this service's per-job quota ` +
            `of ${quota} bytes: query one project at a time, and split a project larger than that.`,
          metadata: { maxBytes: quota, missingBytes, missingCount: absent.length },
        });
      }
      // Only the first page of a project adds its bytes: a continuation asks for URLs of bytes the
      // first page already counted (and parts since stored count as usage by then).
      if (firstPart === 1) await deps.quota?.check(workspaceId, missingBytes, absent);
      const firstIndex = new Map<string, number>();
      req.body.blobs.forEach((b, i) => {
        if (!firstIndex.has(blobName(b))) firstIndex.set(blobName(b), i);
      });
      const page = planPage(
        absent.map((blob) => ({ blob, index: firstIndex.get(blobName(blob))! })),
        partSize,
        firstPart,
        cap,
      );
      await charge(Math.floor(page.listed.reduce((n, p) => n + p.count, 0) / URLS_PER_TOKEN));
      const expiresAt = new Date(now + deps.config.uploadUrlTtlSeconds * 1000);
      const missing = await mapLimited(
        page.listed,
        LISTINGS_AT_ONCE,
        async ({ blob, firstPart: from, count: listed }): Promise<MissingBlob> => {
          const count = partCount(blob.size, partSize);
          // A one-part blob goes straight to its key; parts of a larger one are kept until all are in.
          const stored = count > 1 ? await deps.receiver.storedParts(workspaceId, blob, partSize) : new Set<number>();
          const parts: MissingBlob['parts'] = [];
          for (let i = 0; i < listed; i++) {
            if (i > 0 && i % SLICE === 0) await nextTurn();
            const partNumber = from + i;
            const { offset, length } = partExtent(blob, partSize, partNumber)!;
            const uploadUrl = deps.urls.url({ workspaceId, blob, partNumber, partSize }, expiresAt);
            parts.push({ partNumber, offset, length, uploadUrl, uploaded: stored.has(partNumber) });
          }
          return { ...blob, parts };
        },
      );
      const heldBytes = asked.reduce((sum, b) => sum + (held.has(blobName(b)) ? b.size : 0), 0);
      return {
        partSize,
        expiresAt: expiresAt.toISOString(),
        held: { count: asked.length - absent.length, bytes: heldBytes },
        missing,
        missingTotal: { count: absent.length, bytes: missingBytes },
        continueFrom: page.continueFrom,
      };
    },
  );
};
