// Streaming PUT of a file to a presigned upload URL. node:http rather than fetch: fetch cannot
// report sent bytes, and a Blend project may be gigabytes, so the file is never held in memory.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { extname } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CONTENT_TYPES, type FileType } from '../api/upload.js';
import { ApiError, NetworkError, errorBodyFrom } from './errors.js';
import { readSmallBody } from './small-body.js';

export interface UploadFileOptions {
  /** Content-Type of the PUT. Default: from the extension (see `contentTypeFor`). */
  contentType?: string;
  /** Called as bytes are handed to the socket; the last call has sentBytes === totalBytes. */
  onProgress?: (sentBytes: number, totalBytes: number) => void;
  signal?: AbortSignal;
  /** Longest the connection may stay silent before the upload fails. Default: 30000. */
  idleTimeoutMs?: number;
  /** User-Agent header. Default: `renderbridge-client`. */
  userAgent?: string;
}

export interface UploadResult {
  /** HTTP status of the storage's answer (2xx). */
  readonly status: number;
  /** Bytes sent: the file's size. */
  readonly bytes: number;
}

/** The upload `fileType` of a file name, from its extension; undefined when neither .blend nor .zip. */
export function fileTypeFor(fileName: string): FileType | undefined {
  const ext = extname(fileName).toLowerCase();
  if (ext === '.zip') return 'zip';
  if (ext === '.blend') return 'blend';
  return undefined;
}

/** The Content-Type to PUT a file with: the preferred one of its file type, else octet-stream. */
export function contentTypeFor(fileName: string): string {
  const type = fileTypeFor(fileName);
  return type ? (CONTENT_TYPES[type][0] ?? 'application/octet-stream') : 'application/octet-stream';
}

/**
 * PUTs `filePath` to `uploadUrl` with Content-Length from the file's size, streaming it. No
 * Authorization header: the URL is presigned. Throws ApiError on a non-2xx answer (body parsed
 * when it is the spec's error body), NetworkError when the connection fails or idles too long,
 * and the signal's reason when aborted. Not retried: the caller decides whether to send again.
 */
export async function uploadFile(uploadUrl: string, filePath: string, options: UploadFileOptions = {}): Promise<UploadResult> {
  const url = new URL(uploadUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`uploadUrl must be http(s): ${uploadUrl}`);
  options.signal?.throwIfAborted();
  const totalBytes = (await stat(filePath)).size;
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  const request = (url.protocol === 'https:' ? https : http).request(url, {
    method: 'PUT',
    headers: {
      'content-type': options.contentType ?? contentTypeFor(filePath),
      'content-length': String(totalBytes),
      'user-agent': options.userAgent ?? 'renderbridge-client',
    },
    signal: options.signal,
  });
  let timedOut = false;
  request.setTimeout(idleTimeoutMs, () => {
    timedOut = true;
    request.destroy(new Error(`no activity for ${idleTimeoutMs} ms`));
  });
  const answered = new Promise<{ response: IncomingMessage; text: string }>((resolve, reject) => {
    request.once('error', reject);
    request.once('response', (response) => {
      readSmallBody(response).then((text) => resolve({ response, text }), reject);
    });
  });
  // Keep an early rejection from being reported as unhandled while the body is still streaming.
  answered.catch(() => undefined);

  let sentBytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      sentBytes += chunk.length;
      options.onProgress?.(sentBytes, totalBytes);
      callback(null, chunk);
    },
  });
  if (totalBytes === 0) options.onProgress?.(0, 0);
  const sent = pipeline(createReadStream(filePath), counter, request).then(
    () => undefined,
    (err: unknown) => err,
  );

  let answer: { response: IncomingMessage; text: string };
  try {
    answer = await answered;
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason;
    throw new NetworkError('PUT', redact(url), (await sent) ?? err, timedOut);
  }
  const { response, text } = answer;
  const status = response.statusCode ?? 0;
  if (status < 200 || status > 299) {
    // Storage may refuse before reading the whole body (expired URL, too large): stop sending.
    request.destroy();
    const body = errorBodyFrom(status, response.statusMessage ?? '', text, response.headers['content-type'] ?? null);
    throw new ApiError('PUT', redact(url), status, body);
  }
  const sendError = await sent;
  if (sendError !== undefined) throw new NetworkError('PUT', redact(url), sendError, timedOut);
  return { status, bytes: sentBytes };
}


/** The URL without its query: presigned signatures must not end up in logs and error messages. */
function redact(url: URL): string {
  return `${url.origin}${url.pathname}`;
}
