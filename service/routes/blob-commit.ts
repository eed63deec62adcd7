// POST /uploads/commit (content-addressed upload extension): a project's file list over blobs the
// workspace holds becomes an ordinary, completed upload. Its object is the project document
// (BlobProject) instead of a zip, and its references keep the blobs while the upload or its job
// may still need them. POST /jobs { slug } then runs the spec's flow unchanged.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ROUTES } from '../../shared/routes.js';
import { DEFAULT_UNPACK_LIMITS } from '../../zip/rules.js';
import { ApiError } from '../http/api-error.js';
import { requireAuth } from '../http/auth.js';
import { checkEntries } from '../blobs/commit-entries.js';
import { blobName } from '../blobs/part-layout.js';
import { BLOB_PROJECT_OBJECT, type BlobProject } from '../domain/blob-project.js';
import { uploadKey } from '../domain/jobs.js';
import type { UploadRecord } from '../ports/jobs.js';
import { BLOB_BODY_LIMIT_BYTES, distinctInOrder, type BlobApiDeps } from './blob-query.js';

/** Missing blobs named in a BLOBS_MISSING answer (metadata.missingCount says how many in all). */
const MISSING_LISTED = 100;

export const blobCommitRoutes: FastifyPluginAsyncZod<BlobApiDeps> = async (app, deps) => {
  const r = ROUTES.commitUpload;
  app.post(
    r.path,
    {
      schema: { body: r.body },
      bodyLimit: BLOB_BODY_LIMIT_BYTES,
      ...(deps.inFlight ? { onRequest: deps.inFlight.hook } : {}),
    },
    async (req, reply) => {
      const auth = requireAuth(req);
      const { fileName, entries } = req.body;
      // The worker's own limits: a commit it would refuse is refused now, not as a failed job.
      const check = checkEntries(entries, {
        maxEntries: DEFAULT_UNPACK_LIMITS.maxEntries,
        maxTotalBytes: deps.config.unpackQuotaBytes,
      });
      if (!check.ok) {
        if (check.problem === 'paths') throw new ApiError('VALIDATION_ERROR', { details: check.details });
        if (check.problem === 'tooManyEntries') {
          throw new ApiError('PAYLOAD_TOO_LARGE', {
            message:
              `The project has ${check.entries} files; this service renders projects of at ` +
              `most ${check.maxEntries}: split it into smaller jobs.`,
            metadata: { maxEntries: check.maxEntries, entries: check.entries },
          });
        }
        throw new ApiError('PAYLOAD_TOO_LARGE', {
          message:
            `The project's files add up to ${check.bytes} bytes, over this service's per-job quota ` +
            `of ${check.maxBytes} bytes: split it into smaller jobs, or ask the farm's operator to raise ` +
            `--unpack-quota.`,
          metadata: { maxBytes: check.maxBytes, bytes: check.bytes },
        });
      }
      // The blobs are stored already; a workspace over its quota makes no new upload from them.
      await deps.quota?.check(auth.workspaceId, 1);
      const now = new Date();
      const blobs = distinctInOrder(entries.filter((e) => e.size > 0));
      // Touched now: a blob the commit found held stays at least the retention time, and from the
      // upload created below on, its references keep it while the upload or job needs it.
      const held = new Set((await deps.index.touchHeld(auth.workspaceId, blobs, now.getTime())).map(blobName));
      const missing = blobs.filter((b) => !held.has(blobName(b)));
      if (missing.length > 0) {
        throw new ApiError('BLOBS_MISSING', {
          metadata: { missing: missing.slice(0, MISSING_LISTED), missingCount: missing.length },
        });
      }
      // 128 random bits, as POST /uploads: slugs are handles, not secrets, but must not collide.
      const slug = `up_${randomBytes(16).toString('base64url')}`;
      const objectKey = uploadKey(auth.workspaceId, slug, BLOB_PROJECT_OBJECT);
      const project: BlobProject = {
        version: 1,
        entries: entries.map((e) => ({ path: e.path, sha256: e.sha256, size: e.size })),
      };
      const stored = await deps.storage.put(objectKey, Readable.from([Buffer.from(JSON.stringify(project))]));
      const expiresAt = new Date(now.getTime() + deps.config.uploadUrlTtlSeconds * 1000);
      const upload: UploadRecord = {
        slug,
        workspaceId: auth.workspaceId,
        userId: auth.userId,
        fileName,
        fileType: 'zip',
        objectKey,
        expiresAt: expiresAt.toISOString(),
        createdAt: now.toISOString(),
        completedAt: now.toISOString(),
        size: check.totalBytes,
        sha256: stored.sha256,
        jobId: null,
        sourceFormat: 'blobs',
      };
      // The document is stored first: the upload becomes visible (with its references) only once it is complete.
      await deps.index.commitUpload(upload, blobs);
      return reply
        .code(201)
        .send({ slug, fileName, size: check.totalBytes, fileCount: entries.length, expiresAt: upload.expiresAt });
    },
  );
};
