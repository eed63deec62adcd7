// Sending one part of a blob (content-addressed upload extension): the bytes [offset, offset +
// length) of its file, raw or gzip-encoded, PUT to the part's signed URL and sent again alone,
// with back-off, when the connection fails or the service answers 5xx.
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { BlobPartResult, type BlobCompression, type BlobPart } from '../api/blob-upload.js';
import { ReconnectBudget, sleep, type BackoffOptions } from './backoff.js';
import { ApiError, LocalFileError, NetworkError } from './errors.js';
import { putStream, SourceChangedError } from './put.js';

const gzipAsync = promisify(gzip);

/** Where a blob's bytes are read from. */
export interface BlobFileSource {
  sha256: string;
  size: number;
  /** File on this machine holding the blob's bytes. */
  source: string;
  compression: BlobCompression;
}

/** A part that is about to be sent again. */
export interface PartRetry {
  sha256: string;
  partNumber: number;
  /** 1 for the first retry of this part. */
  retry: number;
  error: Error;
  delayMs: number;
}

export interface PartSendOptions extends BackoffOptions {
  signal: AbortSignal;
  /** Retries of the part after a network error or 5xx. */
  maxRetries: number;
  /** A lost connection is tried again past maxRetries until it has been lost this long, ms. Default 0. */
  patienceMs?: number;
  idleTimeoutMs: number;
  userAgent: string;
  /** Raw bytes of the blob sent (positive) or taken back when an attempt failed (negative). */
  onBytes: (delta: number) => void;
  onRetry: (retry: PartRetry) => void;
  /**
   * Called before the part's bytes are read and again once the service took them; throws to stop
   * the upload at once (its error is not retried). The caller checks there that the file still
   * holds what was hashed, so a changed file is never sent under its old sha256. Default none.
   */
  checkSource?: ((blob: BlobFileSource) => Promise<void>) | undefined;
}

/**
 * PUTs the part, retrying it alone on transient failures; resolves with the service's answer
 * (null when the answer is not a BlobPartResult, e.g. an empty 200). Throws an ApiError for any
 * other answer (URL_EXPIRED, BLOB_HASH_MISMATCH ... are the caller's to handle), the last error
 * once the retries are spent, SourceChangedError when the file is shorter than the blob,
 * LocalFileError when it cannot be read, and whatever `checkSource` throws.
 */
export async function sendPart(
  blob: BlobFileSource,
  part: BlobPart,
  options: PartSendOptions,
): Promise<BlobPartResult | null> {
  const budget = new ReconnectBudget({ ...options, patienceMs: options.patienceMs ?? 0 });
  for (let retry = 0; ; retry++) {
    let counted = 0;
    const count = (rawSent: number): void => {
      options.onBytes(rawSent - counted);
      counted = rawSent;
    };
    try {
      await options.checkSource?.(blob);
      const text = await putPart(blob, part, options, count);
      await options.checkSource?.(blob);
      count(part.length);
      return parseResult(text);
    } catch (err) {
      options.onBytes(-counted);
      if (options.signal.aborted) throw options.signal.reason;
      if (!isTransient(err)) throw err;
      const delayMs = budget.failed(retry, err instanceof NetworkError);
      if (delayMs === undefined) throw err;
      options.onRetry({
        sha256: blob.sha256,
        partNumber: part.partNumber,
        retry: retry + 1,
        error: err as Error,
        delayMs,
      });
      await sleep(delayMs, options.signal);
    }
  }
}

async function putPart(
  blob: BlobFileSource,
  part: BlobPart,
  options: PartSendOptions,
  count: (rawSent: number) => void,
): Promise<string> {
  const common = {
    url: part.uploadUrl,
    signal: options.signal,
    idleTimeoutMs: options.idleTimeoutMs,
    userAgent: options.userAgent,
  };
  if (blob.compression === 'none') {
    const body = createReadStream(blob.source, { start: part.offset, end: part.offset + part.length - 1 });
    const answer = await putStream({
      ...common,
      body,
      length: part.length,
      headers: { 'content-type': 'application/octet-stream' },
      onProgress: count,
    });
    return answer.text;
  }
  // Gzip parts are compressed in memory (one part, a few MiB) so they go with a Content-Length,
  // which object stores require of a PUT.
  const raw = await readRange(blob.source, part.offset, part.length);
  const encoded = await gzipAsync(raw);
  // A part that does not shrink (the blend's packed images) goes raw: the encoding is per part.
  const gzipped = encoded.length < raw.length;
  const bytes = gzipped ? encoded : raw;
  const answer = await putStream({
    ...common,
    body: Readable.from([bytes]),
    length: bytes.length,
    headers: { 'content-type': 'application/octet-stream', ...(gzipped ? { 'content-encoding': 'gzip' } : {}) },
    // Progress counts raw bytes, the unit of the blob and of bytesTotal.
    onProgress: (sent) => count(Math.floor((sent / bytes.length) * part.length)),
  });
  return answer.text;
}

async function readRange(file: string, offset: number, length: number): Promise<Buffer> {
  const handle = await open(file, 'r').catch((err: unknown) => {
    throw new LocalFileError(file, err);
  });
  try {
    const buffer = Buffer.alloc(length);
    let filled = 0;
    while (filled < length) {
      const { bytesRead } = await handle
        .read(buffer, filled, length - filled, offset + filled)
        .catch((err: unknown) => {
          throw new LocalFileError(file, err);
        });
      if (bytesRead === 0)
        throw new SourceChangedError(
          `${file} ended at ${offset + filled} bytes, before the part's end: it changed while being sent`,
        );
      filled += bytesRead;
    }
    return buffer;
  } finally {
    await handle.close();
  }
}

function parseResult(text: string): BlobPartResult | null {
  try {
    const parsed = BlobPartResult.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function isTransient(err: unknown): boolean {
  if (err instanceof NetworkError) return true;
  return err instanceof ApiError && err.status >= 500 && err.status <= 599;
}
