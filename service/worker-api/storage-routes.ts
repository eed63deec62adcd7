// The worker API's object storage (storage-contract.ts): a remote worker holds no bucket key.
// Each call names the job it works for; the token must open that job (scope.ts) and the key must
// be one of the job's (storage-scope.ts). Bytes go straight between the worker and S3 on URLs
// signed here for a few minutes; listing, sizes and deletes the service does itself.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ApiError } from '../http/api-error.js';
import type { JobRecord, JobRecords } from '../ports/jobs.js';
import { ObjectExistsError, type ObjectStorage } from '../ports/storage.js';
import { workerOf } from './auth.js';
import { WORKER_API_BODY_LIMIT } from './contract.js';
import type { WorkerScope } from './scope.js';
import {
  CompleteBody,
  DEFAULT_WORKER_URL_SECONDS,
  KeyBody,
  MultipartBody,
  PartBody,
  PrefixBody,
  SignBody,
  STORAGE_ROUTES,
} from './storage-contract.js';
import { accessOf, notInJob, type Access } from './storage-scope.js';

/** What S3 does for a worker without bucket keys (S3WorkerSigner). */
export interface WorkerSigner {
  /** A URL for one PUT of a whole object, never replacing one (with the headers it must carry). */
  presignWorkerPut(key: string, expiresAt: Date): Promise<{ url: string; headers: Record<string, string> }>;
  startMultipart(key: string): Promise<string>;
  presignPart(key: string, uploadId: string, partNumber: number, expiresAt: Date): Promise<string>;
  /** Throws ObjectExistsError when the key was stored meanwhile (where S3 enforces it). */
  completeMultipart(
    key: string,
    uploadId: string,
    parts: readonly { partNumber: number; etag: string }[],
  ): Promise<void>;
  abortMultipart(key: string, uploadId: string): Promise<void>;
}

/** The storage the routes work on: the service's own, able to sign workers' transfers. */
export type WorkerObjectStorage = Pick<ObjectStorage, 'presignGet' | 'stat' | 'list' | 'delete' | 'deletePrefix'> & {
  workerSigner(): WorkerSigner;
};

/** True for storage the routes can serve (S3); the service's file storage is not offered to remote workers. */
export function canSignWorkerPuts(storage: object): storage is WorkerObjectStorage {
  return typeof (storage as Partial<WorkerObjectStorage>).workerSigner === 'function';
}

export interface StorageRouteOptions {
  storage: WorkerObjectStorage;
  scope: WorkerScope;
  /** Reads the jobs of a requeue chain (opened only through the job the worker holds). */
  jobs: Pick<JobRecords, 'getById'>;
}

/** How far a requeue chain is followed (as WorkerScope.viaJob does). */
const MAX_CHAIN = 10;

export const workerStorageRoutes: FastifyPluginAsyncZod<StorageRouteOptions> = async (
  app,
  { storage, scope, jobs },
) => {
  /** The job, when the token opens it and `key` is one of its objects with at least `need` access. */
  const check = async (
    req: Parameters<typeof workerOf>[0],
    jobId: string,
    key: string,
    need: Access,
  ): Promise<JobRecord> => {
    const rec = await scope.job(workerOf(req), jobId);
    const access = await accessOf(rec, key, () => chainOf(rec, jobs));
    if (need === 'write' && access !== 'write') throw notInJob(jobId, key, access);
    return rec;
  };
  const signer = storage.workerSigner();
  const exists = (jobId: string, key: string) => new ApiError('OBJECT_ALREADY_EXISTS', { metadata: { jobId, key } });
  const expiry = (seconds: number | undefined) => new Date(Date.now() + (seconds ?? DEFAULT_WORKER_URL_SECONDS) * 1000);

  // Lets a worker without bucket keys check at start that this service can serve its files.
  app.get(STORAGE_ROUTES.info, async () => ({ storage: 's3' }));

  app.post(STORAGE_ROUTES.read, { schema: { body: SignBody } }, async (req) => {
    const { jobId, key, expiresInSeconds } = req.body;
    await check(req, jobId, key, 'read');
    const expiresAt = expiry(expiresInSeconds);
    return {
      url: await storage.presignGet(key, { expiresAt, fileName: key.slice(key.lastIndexOf('/') + 1) }),
      headers: {},
      expiresAt: expiresAt.toISOString(),
    };
  });

  app.post(STORAGE_ROUTES.write, { schema: { body: SignBody } }, async (req) => {
    const { jobId, key, expiresInSeconds } = req.body;
    await check(req, jobId, key, 'write');
    // Objects are never replaced: a worker's put of an existing key is ObjectExistsError, as on every store.
    if (await storage.stat(key)) throw exists(jobId, key);
    const expiresAt = expiry(expiresInSeconds);
    return { ...(await signer.presignWorkerPut(key, expiresAt)), expiresAt: expiresAt.toISOString() };
  });

  app.post(STORAGE_ROUTES.multipartStart, { schema: { body: KeyBody } }, async (req) => {
    const { jobId, key } = req.body;
    await check(req, jobId, key, 'write');
    if (await storage.stat(key)) throw exists(jobId, key);
    return { uploadId: await signer.startMultipart(key) };
  });

  // The upload id names S3's upload of this key only: a part signed here can land in no other object.
  app.post(STORAGE_ROUTES.multipartPart, { schema: { body: PartBody } }, async (req) => {
    const { jobId, key, uploadId, partNumber, expiresInSeconds } = req.body;
    await check(req, jobId, key, 'write');
    const expiresAt = expiry(expiresInSeconds);
    return {
      url: await signer.presignPart(key, uploadId, partNumber, expiresAt),
      headers: {},
      expiresAt: expiresAt.toISOString(),
    };
  });

  app.post(
    STORAGE_ROUTES.multipartComplete,
    { schema: { body: CompleteBody }, bodyLimit: WORKER_API_BODY_LIMIT },
    async (req, reply) => {
      const { jobId, key, uploadId, parts } = req.body;
      await check(req, jobId, key, 'write');
      // Looked first for servers that ignore If-None-Match on
      // completion: the parts are dropped, the stored object kept.
      if (await storage.stat(key)) {
        await signer.abortMultipart(key, uploadId).catch(() => undefined);
        throw exists(jobId, key);
      }
      try {
        await signer.completeMultipart(key, uploadId, parts);
      } catch (err) {
        if (err instanceof ObjectExistsError) throw exists(jobId, key);
        throw err;
      }
      return reply.code(204).send();
    },
  );

  app.post(STORAGE_ROUTES.multipartAbort, { schema: { body: MultipartBody } }, async (req, reply) => {
    const { jobId, key, uploadId } = req.body;
    await check(req, jobId, key, 'write');
    await signer.abortMultipart(key, uploadId);
    return reply.code(204).send();
  });

  app.post(STORAGE_ROUTES.stat, { schema: { body: KeyBody } }, async (req) => {
    await check(req, req.body.jobId, req.body.key, 'read');
    return { data: (await storage.stat(req.body.key)) ?? null };
  });

  app.post(STORAGE_ROUTES.list, { schema: { body: PrefixBody } }, async (req) => {
    await check(req, req.body.jobId, req.body.prefix, 'read');
    return { data: await storage.list(req.body.prefix) };
  });

  app.post(STORAGE_ROUTES.delete, { schema: { body: KeyBody } }, async (req, reply) => {
    await check(req, req.body.jobId, req.body.key, 'write');
    await storage.delete(req.body.key);
    return reply.code(204).send();
  });

  app.post(STORAGE_ROUTES.deletePrefix, { schema: { body: PrefixBody } }, async (req, reply) => {
    await check(req, req.body.jobId, req.body.prefix, 'write');
    await storage.deletePrefix(req.body.prefix);
    return reply.code(204).send();
  });
};

/** The jobs `rec` was requeued from, nearest first. */
async function chainOf(rec: JobRecord, jobs: Pick<JobRecords, 'getById'>): Promise<JobRecord[]> {
  const out: JobRecord[] = [];
  let link = rec.internal.requeue?.fromJobId;
  for (let depth = 0; link && depth < MAX_CHAIN; depth++) {
    const prev = await jobs.getById(link);
    if (!prev) break;
    out.push(prev);
    link = prev.internal.requeue?.fromJobId;
  }
  return out;
}
