// Presigned object URLs served by the service itself (filesystem storage only): one PUT per
// upload URL, and GET with Range for downloads. These live outside the API prefix and need no
// API key: the HMAC signature in the query is the credential.
import path from 'node:path';
import send from '@fastify/send';
import { create as contentDisposition } from 'content-disposition';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CONTENT_TYPES, FileType } from '../../shared/api/upload.js';
import { ApiError } from '../http/api-error.js';
import type { SignedMethod, UrlSigner } from '../adapters/fs-storage/url-signer.js';
import { FsObjectStorage, isValidKey } from '../adapters/fs-storage/fs-storage.js';
import { ObjectExistsError, ObjectTooLargeError } from '../ports/storage.js';

export interface StorageRouteDeps {
  storage: FsObjectStorage;
  signer: UrlSigner;
  root: string;
  maxUploadBytes: number;
  /** Told about every completed PUT (records the upload as complete). */
  onPutComplete(key: string, result: { size: number; sha256: string }): Promise<void>;
}

type Query = Record<string, string | undefined>;

function verified(req: FastifyRequest, deps: StorageRouteDeps, method: SignedMethod, extra: readonly string[]): string {
  const key = (req.params as { '*': string })['*'];
  const q = req.query as Query;
  if (!isValidKey(key)) throw new ApiError('SIGNATURE_INVALID');
  const params: Record<string, string> = {};
  for (const name of extra) {
    const v = q[name];
    if (v === undefined) throw new ApiError('SIGNATURE_INVALID');
    params[name] = v;
  }
  const r = deps.signer.verify({ method, key, expiresAt: Number(q.exp), params }, q.sig);
  if (!r.ok) throw new ApiError(r.reason);
  return key;
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

export async function storageRoutes(app: FastifyInstance, deps: StorageRouteDeps): Promise<void> {
  // Upload bodies are streamed to disk by the handler, never parsed or buffered by fastify.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));

  app.put('/storage/*', async (req, reply) => {
    const key = verified(req, deps, 'PUT', ['ft']);
    const fileType = FileType.parse((req.query as Query).ft);
    if (!CONTENT_TYPES[fileType].includes(mediaType(req.headers['content-type']))) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', {
        message: `Send this ${fileType} upload with Content-Type: ${CONTENT_TYPES[fileType][0]}.`,
        metadata: { expected: CONTENT_TYPES[fileType] },
      });
    }
    const declared = req.headers['content-length'];
    if (declared === undefined && !req.headers['transfer-encoding']) throw new ApiError('LENGTH_REQUIRED');
    if (declared !== undefined && Number(declared) > deps.maxUploadBytes) {
      // Refuse before reading a byte; close so the client stops sending.
      reply.header('connection', 'close');
      throw new ApiError('PAYLOAD_TOO_LARGE', { metadata: { maxBytes: deps.maxUploadBytes } });
    }
    if (await deps.storage.stat(key)) throw new ApiError('UPLOAD_ALREADY_COMPLETED');
    try {
      const result = await deps.storage.put(key, req.raw, { maxBytes: deps.maxUploadBytes });
      await deps.onPutComplete(key, result);
      reply.header('etag', `"${result.sha256}"`);
      return { size: result.size, sha256: result.sha256 };
    } catch (err) {
      if (err instanceof ObjectTooLargeError) {
        reply.header('connection', 'close');
        throw new ApiError('PAYLOAD_TOO_LARGE', { metadata: { maxBytes: deps.maxUploadBytes } });
      }
      if (err instanceof ObjectExistsError) throw new ApiError('UPLOAD_ALREADY_COMPLETED');
      throw err;
    }
  });

  app.get('/storage/*', async (req, reply) => {
    const key = verified(req, deps, 'GET', ['fn']);
    const fileName = (req.query as Query).fn!;
    const rel = key.split('/').map(encodeURIComponent).join('/');
    const res = await send(req.raw, `/${rel}`, { root: deps.root, dotfiles: 'deny', index: false, cacheControl: false });
    if (res.type === 'error') {
      const status = (res.metadata.error as { status?: number }).status ?? 500;
      if (status === 404) throw new ApiError('OBJECT_NOT_FOUND');
      if (status === 416) throw new ApiError('RANGE_NOT_SATISFIABLE');
      throw res.metadata.error;
    }
    if (res.type === 'directory') throw new ApiError('OBJECT_NOT_FOUND');
    reply.code(res.statusCode);
    reply.headers(res.headers as Record<string, string>);
    reply.header('content-disposition', contentDisposition(path.basename(fileName)));
    reply.header('cache-control', 'private, no-store');
    return reply.send(res.stream);
  });
}
