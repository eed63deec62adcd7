// The worker API's object storage (storage-routes.ts): a worker on another machine reads and
// writes the objects of the jobs it holds a task of without bucket keys. The service checks each
// key against the job's own prefixes (storage-scope.ts) and answers a short-lived presigned URL
// for the bytes (straight to S3), or does the small operations itself.
//
// Every body names `jobId`: the job the worker works for (a task it holds a lease on, or an ended
// job it ran). A job the token does not open, and a key of another job or workspace, answer
// 404 JOB_NOT_FOUND as for jobs; any other key outside the job's prefixes is
// 403 STORAGE_KEY_NOT_IN_JOB.
//
//   GET  /storage               -> 200 { storage: 's3' } the routes below are offered (absent: a
//                                 service on its own file storage, or older than this worker)
//   POST /storage/read          { jobId, key, expiresInSeconds? } -> 200 SignedUrl (GET, with Range)
//   POST /storage/write         { jobId, key, expiresInSeconds? } -> 200 SignedUrl (one PUT of the
//                                 whole object, with the headers given); 409 OBJECT_ALREADY_EXISTS
//   POST /storage/stat          { jobId, key }    -> 200 { data: { size } | null }
//   POST /storage/list          { jobId, prefix } -> 200 { data: [{ key, size }] } (key order)
//   POST /storage/delete        { jobId, key }    -> 204
//   POST /storage/delete-prefix { jobId, prefix } -> 204
//
// Objects over S3's 5 GiB single PUT go up in parts, on URLs signed one part at a time (a long
// upload outlives any one URL):
//   POST /storage/multipart/start    { jobId, key }  -> 200 { uploadId }; 409 OBJECT_ALREADY_EXISTS
//   POST /storage/multipart/part     { jobId, key, uploadId, partNumber, expiresInSeconds? } -> 200 SignedUrl
//                                      (S3 answers the part's PUT with its ETag)
//   POST /storage/multipart/complete { jobId, key, uploadId, parts: [{ partNumber, etag }] } -> 204;
//                                      409 OBJECT_ALREADY_EXISTS (stored meanwhile; S3 enforcing)
//   POST /storage/multipart/abort    { jobId, key, uploadId } -> 204
import { z } from 'zod';
import { isValidKey } from '../adapters/fs-storage/fs-storage.js';

/** Longest life of a URL the storage routes sign: a worker asks for one right before each transfer. */
export const MAX_WORKER_URL_SECONDS = 900;
/** Life of a signed URL when the worker names none. */
export const DEFAULT_WORKER_URL_SECONDS = 300;
/** S3 takes at most 5 GiB in one PUT; larger objects go up in parts. */
export const MAX_SINGLE_PUT_BYTES = 5 * 1024 ** 3;

const Key = z.string().min(1).max(1024).refine(isValidKey, 'not a valid object key');
/** A folder, as ObjectStorage.list takes it (`a/b` or `a/b/`). */
const Prefix = z
  .string()
  .min(1)
  .max(1024)
  .refine((p) => isValidKey(p.replace(/\/+$/, '')), 'not a valid object key prefix');
const expiresInSeconds = z.int().min(1).max(MAX_WORKER_URL_SECONDS).optional();

export const KeyBody = z.strictObject({ jobId: z.uuid(), key: Key });
export const PrefixBody = z.strictObject({ jobId: z.uuid(), prefix: Prefix });
export const SignBody = z.strictObject({ jobId: z.uuid(), key: Key, expiresInSeconds });

const uploadId = z.string().min(1).max(1024);
/** S3 numbers parts 1 to 10,000. */
const partNumber = z.int().min(1).max(10_000);
export const MultipartBody = z.strictObject({ jobId: z.uuid(), key: Key, uploadId });
export const PartBody = z.strictObject({ jobId: z.uuid(), key: Key, uploadId, partNumber, expiresInSeconds });
export const CompleteBody = z.strictObject({
  jobId: z.uuid(),
  key: Key,
  uploadId,
  parts: z
    .array(z.strictObject({ partNumber, etag: z.string().min(1).max(200) }))
    .min(1)
    .max(10_000),
});
export const StartAnswer = z.object({ uploadId });
export const InfoAnswer = z.object({ storage: z.string() });

export const SignedUrl = z.object({
  url: z.string(),
  /** Headers the request must carry (signed into the URL). */
  headers: z.record(z.string(), z.string()),
  expiresAt: z.iso.datetime({ offset: true }),
});
export type SignedUrl = z.infer<typeof SignedUrl>;

export const StatAnswer = z.object({ data: z.object({ size: z.int().min(0) }).nullable() });
export const ListAnswer = z.object({ data: z.array(z.object({ key: z.string(), size: z.int().min(0) })) });

/** The routes, fastify style, relative to WORKER_API_PREFIX. */
export const STORAGE_ROUTES = {
  info: '/storage',
  read: '/storage/read',
  write: '/storage/write',
  stat: '/storage/stat',
  list: '/storage/list',
  delete: '/storage/delete',
  deletePrefix: '/storage/delete-prefix',
  multipartStart: '/storage/multipart/start',
  multipartPart: '/storage/multipart/part',
  multipartComplete: '/storage/multipart/complete',
  multipartAbort: '/storage/multipart/abort',
} as const;
