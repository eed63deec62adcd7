import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ROUTES } from '../../shared/routes.js';
import { ApiError } from '../http/api-error.js';
import { requireAuth } from '../http/auth.js';
import { newJobRecord, presentJob, presentJobJson } from '../domain/jobs.js';
import { UploadClaimError, type JobRecord } from '../ports/jobs.js';
import type { ServiceContext } from '../context.js';

/** Loads a job of the caller's workspace; another workspace's job reads as not found. */
export async function loadJob(ctx: ServiceContext, workspaceId: string, id: string): Promise<JobRecord> {
  const rec = await ctx.jobs.get(workspaceId, id);
  if (!rec) throw new ApiError('JOB_NOT_FOUND', { metadata: { jobId: id } });
  return rec;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export const jobRoutes: FastifyPluginAsyncZod<ServiceContext> = async (app, ctx) => {
  const ttl = ctx.config.downloadUrlTtlSeconds;
  const clock = ctx.clock ?? Date.now;

  const create = ROUTES.createJob;
  app.post(create.path, { schema: { body: create.body } }, async (req, reply) => {
    const auth = requireAuth(req);
    const { slug, uploadPreflight } = req.body;
    const upload = await ctx.jobs.getUpload(auth.workspaceId, slug);
    if (!upload) throw new ApiError('UPLOAD_NOT_FOUND', { metadata: { slug } });
    if (upload.jobId) throw new ApiError('UPLOAD_ALREADY_USED', { metadata: { slug, jobId: upload.jobId } });
    if (upload.sourceFormat === 'blobs' && Date.parse(upload.expiresAt) < clock()) {
      // An expired commit no longer keeps its blobs: they may be collected under the job.
      throw new ApiError('UPLOAD_INCOMPLETE', {
        message:
          'This committed project expired before a job was created from it: commit it again (POST ' +
          '/uploads/commit), then create the job with the new slug.',
        metadata: { slug, uploadUrlExpired: true },
      });
    }
    let size = upload.size;
    if (!upload.completedAt) {
      // Storage that takes PUTs directly (S3) never tells the service: look for the object.
      const stored = await ctx.storage.stat(upload.objectKey);
      if (!stored) {
        const expired = Date.parse(upload.expiresAt) < clock();
        throw new ApiError('UPLOAD_INCOMPLETE', { metadata: { slug, uploadUrlExpired: expired } });
      }
      if (stored.size > ctx.config.maxUploadBytes) {
        // A presigned PUT cannot cap the size, so S3 took it: drop the object and refuse as the
        // filesystem route refuses an oversize PUT. The upload stays incomplete (a smaller
        // file may still be PUT while its URL lasts).
        await ctx.storage.delete(upload.objectKey);
        throw new ApiError('PAYLOAD_TOO_LARGE', { metadata: { maxBytes: ctx.config.maxUploadBytes } });
      }
      size = stored.size;
      await ctx.jobs.completeUpload(slug, stored.size, null);
    }
    const rec = newJobRecord({ ...upload, size: size ?? 0 }, uploadPreflight);
    try {
      await ctx.jobs.createJobFromUpload(slug, rec);
    } catch (err) {
      if (err instanceof UploadClaimError) throw new ApiError(err.reason, { metadata: { slug } });
      throw err;
    }
    return reply.code(201).send(await presentJob(rec, ctx.storage, ttl));
  });

  const list = ROUTES.listJobs;
  // The two hot reads answer with stored JSON text (see presentJobJson); the shapes are the
  // JobList and JobEnvelope schemas, which test/service/api checks against every response.
  app.get(list.path, { schema: { querystring: list.query } }, async (req, reply) => {
    const auth = requireAuth(req);
    const { page, pageSize, status } = req.query;
    const { items, total } = await ctx.jobs.listJson(auth.workspaceId, {
      page,
      pageSize,
      ...(status ? { status } : {}),
    });
    const jobs = await Promise.all(items.map((j) => presentJobJson(j, ctx.storage, ttl)));
    const pagination = JSON.stringify({ page, pageSize, total, totalPages: Math.ceil(total / pageSize) });
    return reply.type(JSON_TYPE).send(`{"jobs":[${jobs.join(',')}],"pagination":${pagination}}`);
  });

  const get = ROUTES.getJob;
  app.get(get.path, { schema: { params: get.params } }, async (req, reply) => {
    const auth = requireAuth(req);
    const stored = await ctx.jobs.getJson(auth.workspaceId, req.params.id);
    if (!stored) throw new ApiError('JOB_NOT_FOUND', { metadata: { jobId: req.params.id } });
    return reply.type(JSON_TYPE).send(`{"data":${await presentJobJson(stored, ctx.storage, ttl)}}`);
  });
};
