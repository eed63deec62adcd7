// One streaming PUT to a presigned URL (a whole project, or one part of a blob). node:http rather
// than fetch: fetch cannot report sent bytes, and a project may be gigabytes, so bodies are
// streamed from their file and never held in memory whole.
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError, LocalFileError, NetworkError, errorBodyFrom } from './errors.js';
import { readSmallBody } from './small-body.js';

export interface PutRequest {
  url: string;
  /** The bytes to send; exactly `length` of them, else the PUT fails with SourceChangedError. */
  body: Readable;
  length: number;
  /** Content-Type and any other header (Content-Encoding); Content-Length and User-Agent are set here. */
  headers: Record<string, string>;
  /** Called as bytes are handed to the socket, with the bytes sent so far. */
  onProgress?: (sentBytes: number) => void;
  signal?: AbortSignal | undefined;
  /** Longest the connection may stay silent before the PUT fails with a NetworkError. */
  idleTimeoutMs: number;
  userAgent: string;
}

export interface PutAnswer {
  /** HTTP status of the 2xx answer. */
  status: number;
  /** Its body (at most 64 KiB kept). */
  text: string;
}

/** The file gave fewer bytes than announced: it changed (was truncated) while being sent. */
export class SourceChangedError extends Error {
  override readonly name = 'SourceChangedError';
}

/**
 * PUTs `body` with Content-Length `length`. Throws ApiError on a non-2xx answer (body parsed when
 * it is the spec's error body), NetworkError when the connection fails or idles too long,
 * SourceChangedError when the body ends short, LocalFileError when the body's file cannot be read
 * (a local problem, not the network's), and the signal's reason when aborted. Not retried:
 * the caller decides whether to send again.
 */
export async function putStream(req: PutRequest): Promise<PutAnswer> {
  const url = new URL(req.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`upload URL must be http(s): ${redactUrl(url)}`);
  req.signal?.throwIfAborted();
  const request = (url.protocol === 'https:' ? https : http).request(url, {
    method: 'PUT',
    headers: { ...req.headers, 'content-length': String(req.length), 'user-agent': req.userAgent },
    signal: req.signal,
  });
  let timedOut = false;
  request.setTimeout(req.idleTimeoutMs, () => {
    timedOut = true;
    request.destroy(new Error(`no activity for ${req.idleTimeoutMs} ms`));
  });
  const answered = new Promise<{ response: IncomingMessage; text: string }>((resolve, reject) => {
    request.once('error', reject);
    request.once('response', (response) => {
      readSmallBody(response).then((text) => resolve({ response, text }), reject);
    });
  });
  // Keep an early rejection from being reported as unhandled while the body is still streaming.
  answered.catch(() => undefined);

  // An error of the body itself (its file vanished or is unreadable) is told apart from the
  // connection's: it must name the file, not the network or the service.
  let bodyError: unknown;
  req.body.once('error', (err) => {
    bodyError ??= err;
  });
  const localError = (): LocalFileError | undefined => {
    if (bodyError === undefined) return undefined;
    const file = (bodyError as NodeJS.ErrnoException).path;
    return new LocalFileError(typeof file === 'string' ? file : 'the upload source', bodyError);
  };

  let sentBytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      sentBytes += chunk.length;
      req.onProgress?.(sentBytes);
      callback(null, chunk);
    },
    flush(callback) {
      callback(
        sentBytes === req.length
          ? null
          : new SourceChangedError(`the source gave ${sentBytes} of ${req.length} bytes: it changed while being sent`),
      );
    },
  });
  const sent = pipeline(req.body, counter, request).then(
    () => undefined,
    (err: unknown) => err,
  );

  let answer: { response: IncomingMessage; text: string };
  try {
    answer = await answered;
  } catch (err) {
    if (req.signal?.aborted) throw req.signal.reason;
    const sendError = await sent;
    if (sendError instanceof SourceChangedError) throw sendError;
    throw localError() ?? new NetworkError('PUT', redactUrl(url), sendError ?? err, timedOut);
  }
  const { response, text } = answer;
  const status = response.statusCode ?? 0;
  if (status < 200 || status > 299) {
    // Storage may refuse before reading the whole body (expired URL, too large): stop sending.
    request.destroy();
    req.body.destroy();
    const body = errorBodyFrom(status, response.statusMessage ?? '', text, response.headers['content-type'] ?? null);
    throw new ApiError('PUT', redactUrl(url), status, body);
  }
  const sendError = await sent;
  if (sendError instanceof SourceChangedError) throw sendError;
  if (sendError !== undefined) throw localError() ?? new NetworkError('PUT', redactUrl(url), sendError, timedOut);
  return { status, text };
}

/** The URL without its query: presigned signatures must not end up in logs and error messages. */
export function redactUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}
