// PUT of one blob part (content-addressed upload extension), outside the API prefix: the URL's
// HMAC signature is the credential, as for the presigned upload URLs of files storage. On every
// storage adapter the bytes pass through the service, which checks them before they are stored.
import { PassThrough, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { BlobPartResult } from '../../shared/api/blob-upload.js';
import { ApiError } from '../http/api-error.js';
import { BlobBusyError, type BlobReceiver } from '../blobs/blob-receiver.js';
import { partExtent } from '../blobs/part-layout.js';
import { BLOB_PARTS_PATH, type BlobPartUrls } from '../blobs/part-urls.js';
import { HashMismatchError, LengthMismatchError } from '../blobs/verify-stream.js';

export interface BlobPartRouteDeps {
  urls: BlobPartUrls;
  receiver: BlobReceiver;
}

/** gzip adds at most ~0.03% and a few header bytes to incompressible data: a longer body cannot be the part. */
function maxEncodedLength(rawLength: number): number {
  return rawLength + Math.ceil(rawLength / 1024) + 1024;
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * The request's body, decoded, as a stream of its own: a refusal destroys that stream, never the
 * request, so the connection stays up for the error answer (the rest of the body is discarded).
 */
function decodedBody(req: FastifyRequest, gzip: boolean): Readable {
  const body = gzip ? createGunzip() : new PassThrough();
  const raw = req.raw;
  const cut = () => {
    if (!raw.complete) body.destroy(new Error('the client closed the connection before the part was complete'));
  };
  raw.once('aborted', cut);
  raw.once('close', cut);
  raw.once('error', (err) => body.destroy(err));
  // The receiver looks at the index before it reads: an error meanwhile (bad gzip) waits on the
  // stream (`errored`) for the pipeline that reads it, instead of escaping as uncaught.
  body.on('error', () => undefined);
  raw.pipe(body);
  return body;
}

export async function blobPartRoutes(app: FastifyInstance, deps: BlobPartRouteDeps): Promise<void> {
  // Part bodies are streamed by the handler, never parsed or buffered by fastify.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));

  app.put(`${BLOB_PARTS_PATH}/:ws/:blob/:part`, async (req, reply): Promise<BlobPartResult> => {
    const v = deps.urls.verify(
      req.params as { ws: string; blob: string; part: string },
      req.query as Record<string, unknown>,
    );
    if (!v.ok) throw new ApiError(v.reason);
    const a = v.address;
    const extent = partExtent(a.blob, a.partSize, a.partNumber);
    if (!extent) throw new ApiError('BLOB_PART_SIZE_MISMATCH', { metadata: { partNumber: a.partNumber } });
    const type = mediaType(req.headers['content-type']);
    if (type !== '' && type !== 'application/octet-stream') {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', {
        message: 'Send blob parts with Content-Type: application/octet-stream.',
        metadata: { expected: ['application/octet-stream'] },
      });
    }
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (encoding !== 'identity' && encoding !== 'gzip') {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', {
        message: 'Send blob parts raw or with Content-Encoding: gzip; no other encoding is accepted.',
        metadata: { contentEncoding: encoding },
      });
    }
    const gzip = encoding === 'gzip';
    const declared = req.headers['content-length'];
    if (declared === undefined && !req.headers['transfer-encoding']) throw new ApiError('LENGTH_REQUIRED');
    const mismatch = (received: number | null) =>
      new ApiError('BLOB_PART_SIZE_MISMATCH', {
        metadata: { partNumber: a.partNumber, offset: extent.offset, length: extent.length, received },
      });
    if (
      declared !== undefined &&
      (gzip ? Number(declared) > maxEncodedLength(extent.length) : Number(declared) !== extent.length)
    ) {
      // Refused before a byte is read; close so the client stops sending.
      reply.header('connection', 'close');
      throw mismatch(gzip ? null : Number(declared));
    }
    let complete: boolean;
    try {
      complete = await deps.receiver.receive(a, decodedBody(req, gzip));
    } catch (err) {
      if (!req.raw.complete) {
        // Refused mid-body: discard the rest and close, so a client streaming without end cannot keep it busy.
        reply.header('connection', 'close');
        req.raw.resume();
      }
      if (err instanceof LengthMismatchError) throw mismatch(err.tooLong ? null : err.received);
      if (err instanceof HashMismatchError)
        throw new ApiError('BLOB_HASH_MISMATCH', {
          metadata: { sha256: a.blob.sha256, size: a.blob.size, actualSha256: err.actual },
        });
      if (err instanceof BlobBusyError) {
        throw new ApiError('SERVICE_UNAVAILABLE', {
          message:
            'This blob is being deleted after its retention period right now: query it again in a few ' +
            'seconds (POST /uploads/blobs/query) and send it again.',
          headers: { 'retry-after': '5' },
        });
      }
      if ((err as { code?: string }).code === 'Z_DATA_ERROR' || (err as { code?: string }).code === 'Z_BUF_ERROR') {
        throw new ApiError('BLOB_PART_SIZE_MISMATCH', {
          message: 'The body is not valid gzip: send the part raw, or gzip-encoded with Content-Encoding: gzip.',
          metadata: { partNumber: a.partNumber },
        });
      }
      throw err;
    }
    return { sha256: a.blob.sha256, size: a.blob.size, partNumber: a.partNumber, blobComplete: complete };
  });
}
