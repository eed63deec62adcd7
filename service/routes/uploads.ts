import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ROUTES } from '../../shared/routes.js';
import { requireAuth } from '../http/auth.js';
import { safeObjectName, uploadKey } from '../domain/jobs.js';
import type { ServiceContext } from '../context.js';
import { ApiError } from '../http/api-error.js';
import type { PartialUploads } from '../adapters/fs-storage/partial-uploads.js';

export const uploadRoutes: FastifyPluginAsyncZod<ServiceContext> = async (app, ctx) => {
  const r = ROUTES.createUpload;
  app.post(r.path, { schema: { body: r.body } }, async (req, reply) => {
    const auth = requireAuth(req);
    // The size is not known yet: a workspace already at its quota gets no new upload target.
    await ctx.quota?.check(auth.workspaceId);
    // 128 random bits: slugs are handles, not secrets, but must not be guessable or collide.
    const slug = `up_${randomBytes(16).toString('base64url')}`;
    const now = new Date();
    const expiresAt = new Date(now.getTime() + ctx.config.uploadUrlTtlSeconds * 1000);
    const objectKey = uploadKey(auth.workspaceId, slug, safeObjectName(req.body.fileName));
    await ctx.jobs.createUpload({
      slug,
      workspaceId: auth.workspaceId,
      userId: auth.userId,
      fileName: req.body.fileName,
      fileType: req.body.fileType,
      objectKey,
      expiresAt: expiresAt.toISOString(),
      createdAt: now.toISOString(),
      completedAt: null,
      size: null,
      sha256: null,
      jobId: null,
    });
    const uploadUrl = await ctx.storage.presignPut(objectKey, { expiresAt, fileType: req.body.fileType });
    return reply.code(201).send({ uploadUrl, slug, expiresAt: expiresAt.toISOString() });
  });
};

/**
 * GET /uploads/{slug} (extension resumable-uploads): how far the upload's PUT got, so a client
 * whose connection broke sends only the rest. Registered only where PUTs are kept (file storage).
 */
export const uploadStateRoutes: FastifyPluginAsyncZod<{ ctx: ServiceContext; partials: PartialUploads }> = async (
  app,
  { ctx, partials },
) => {
  const r = ROUTES.getUpload;
  app.get(r.path, { schema: { params: r.params } }, async (req) => {
    const auth = requireAuth(req);
    const up = await ctx.jobs.getUpload(auth.workspaceId, req.params.slug);
    if (!up) throw new ApiError('UPLOAD_NOT_FOUND');
    const completed = up.completedAt !== null;
    const kept = completed ? undefined : await partials.state(up.objectKey);
    const receivedBytes = completed ? (up.size ?? 0) : (kept?.receivedBytes ?? 0);
    const totalBytes = completed ? (up.size ?? 0) : (kept?.totalBytes ?? null);
    return {
      data: {
        slug: up.slug,
        fileName: up.fileName,
        fileType: up.fileType,
        expiresAt: up.expiresAt,
        completed,
        receivedBytes,
        totalBytes,
      },
    };
  });
};
