// Presigned object URLs served by the service itself (filesystem storage only): one PUT per
// upload URL, and GET with Range for downloads. These live outside the API prefix and need no
// API key: the HMAC signature in the query is the credential. With `partials` (extension
// resumable-uploads) the bytes of a PUT whose connection broke are kept, and a PUT with
// `Content-Range: bytes N-(T-1)/T` continues them (partial-uploads.ts).
import path from 'node:path';
import send from '@fastify/send';
import { create as contentDisposition } from 'content-disposition';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CONTENT_TYPES, FileType } from '../../shared/api/upload.js';
import { ApiError } from '../http/api-error.js';
import type { SignedMethod, UrlSigner } from '../adapters/fs-storage/url-signer.js';
import { FsObjectStorage, isValidKey } from '../adapters/fs-storage/fs-storage.js';
import { ObjectExistsError, ObjectTooLargeError } from '../ports/storage.js';
import { ResumeMismatchError, type PartialUploads } from '../adapters/fs-storage/partial-uploads.js';

export interface StorageRouteDeps {
  storage: FsObjectStorage;
  signer: UrlSigner;
  root: string;
  maxUploadBytes: number;
  /** Told about every completed PUT (records the upload as complete). */
  onPutComplete(key: string, result: { size: number; sha256: string }): Promise<void>;
  /** Where the bytes of broken PUTs are kept to be resumed. Default none: a PUT is all or nothing. */
  partials?: PartialUploads;
  /** Kept bytes untouched this long are removed (an upload URL's lifetime), ms. Default 6 h. */
  partialTtlMs?: number;
  /** The clock URLs expire by, epoch ms. Default Date.now (tests move it past an expiry). */
  clock?: () => number;
}

/** How often kept bytes of abandoned uploads are looked for. */
const PARTIAL_SWEEP_MS = 10 * 60 * 1000;

/** `bytes START-END/TOTAL` continuing to the file's end: the only Content-Range a resume sends. */
const CONTENT_RANGE = /^bytes (\d{1,15})-(\d{1,15})\/(\d{1,15})$/;

/** The start and total of a resuming PUT's Content-Range; undefined without one. */
function resumeRange(
  header: string | undefined,
  declared: string | undefined,
): { start: number; total: number } | undefined {
  if (header === undefined) return undefined;
  const m = CONTENT_RANGE.exec(header.trim());
  const [start, end, total] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [NaN, NaN, NaN];
  const problem = !m
    ? 'must read "bytes START-END/TOTAL"'
    : end !== total - 1 || start > end
      ? "must run from START to the file's last byte (END = TOTAL - 1)"
      : declared === undefined || Number(declared) !== end - start + 1
        ? 'must cover exactly the Content-Length bytes sent'
        : undefined;
  if (problem) {
    throw new ApiError('VALIDATION_ERROR', {
      message:
        `Content-Range ${problem}: send the rest of the file as "bytes N-(TOTAL-1)/TOTAL" with N the bytes the ` +
        `service holds, or the whole file without Content-Range.`,
      details: [{ code: 'invalid_header', path: ['headers', 'content-range'], message: problem }],
    });
  }
  return { start, total };
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
  const nowSeconds = (deps.clock ?? Date.now)() / 1000;
  const r = deps.signer.verify({ method, key, expiresAt: Number(q.exp), params }, q.sig, nowSeconds);
  if (!r.ok) throw new ApiError(r.reason);
  return key;
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

export async function storageRoutes(app: FastifyInstance, deps: StorageRouteDeps): Promise<void> {
  const partials = deps.partials;
  if (partials) {
    const ttlMs = deps.partialTtlMs ?? 6 * 3600 * 1000;
    const sweep = () =>
      void partials
        .sweep(ttlMs)
        .catch((err: unknown) => app.log.warn({ err }, 'removing the kept bytes of abandoned uploads failed'));
    await partials.init();
    sweep();
    const timer = setInterval(sweep, PARTIAL_SWEEP_MS).unref();
    app.addHook('onClose', async () => clearInterval(timer));
  }
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
    const range = resumeRange(req.headers['content-range'], declared);
    const total = range?.total ?? (declared !== undefined ? Number(declared) : undefined);
    if (total !== undefined && total > deps.maxUploadBytes) {
      // Refuse before reading a byte; close so the client stops sending.
      reply.header('connection', 'close');
      throw new ApiError('PAYLOAD_TOO_LARGE', { metadata: { maxBytes: deps.maxUploadBytes } });
    }
    if (await deps.storage.stat(key)) throw new ApiError('UPLOAD_ALREADY_COMPLETED');
    try {
      const result =
        deps.partials && total !== undefined
          ? await receiveKept(deps.partials, deps.storage, key, req, { start: range?.start ?? 0, total })
          : await deps.storage.put(key, req.raw, { maxBytes: deps.maxUploadBytes });
      await deps.onPutComplete(key, result);
      reply.header('etag', `"${result.sha256}"`);
      return { size: result.size, sha256: result.sha256 };
    } catch (err) {
      if (err instanceof ObjectTooLargeError) {
        reply.header('connection', 'close');
        throw new ApiError('PAYLOAD_TOO_LARGE', { metadata: { maxBytes: deps.maxUploadBytes } });
      }
      if (err instanceof ResumeMismatchError) {
        reply.header('connection', 'close');
        throw new ApiError('UPLOAD_RESUME_MISMATCH', {
          metadata: { receivedBytes: err.receivedBytes, totalBytes: err.totalBytes },
        });
      }
      if (err instanceof ObjectExistsError) throw new ApiError('UPLOAD_ALREADY_COMPLETED');
      throw err;
    }
  });

  app.get('/storage/*', async (req, reply) => {
    const key = verified(req, deps, 'GET', ['fn']);
    const fileName = (req.query as Query).fn!;
    const rel = key.split('/').map(encodeURIComponent).join('/');
    const res = await send(req.raw, `/${rel}`, {
      root: deps.root,
      dotfiles: 'deny',
      index: false,
      cacheControl: false,
    });
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

/**
 * Receives the PUT's bytes [start, total) into the kept file and, once complete, makes it the
 * object. A newer PUT of the same URL ends this one (its socket is destroyed): the newest wins.
 */
async function receiveKept(
  partials: PartialUploads,
  storage: FsObjectStorage,
  key: string,
  req: FastifyRequest,
  r: { start: number; total: number },
): Promise<{ size: number; sha256: string }> {
  const got = await partials.receive(key, req.raw, { ...r, stop: () => req.raw.destroy() });
  try {
    // Synced already: linking it is all that is left.
    await storage.putFile(key, got.file, { sync: false });
  } finally {
    await partials.drop(key);
  }
  return { size: got.size, sha256: got.sha256 };
}
