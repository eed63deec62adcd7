// One output file: skipped when a complete copy is there, resumed with `Range` from its `.part`
// file, renamed into place only once its size matches what the server announced.
import { constants as fsConstants, createWriteStream } from 'node:fs';
import { lstat, open, rename, rm, stat } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError, NetworkError } from '../../shared/client/errors.js';
import { backoffDelay, sleep } from '../../shared/client/backoff.js';
import { contentLength, openUrl, parseContentRange, redactUrl } from './http.js';

export interface DownloadFileOptions {
  signal?: AbortSignal;
  /** Called with the bytes of this file on disk and its full size once known (null before). */
  onProgress?: (bytesOnDisk: number, total: number | null) => void;
  /** Tries for transient failures (network errors, cut-off bodies, 5xx, 429). Default 5. */
  attempts?: number;
  /** Ceiling of the first back-off delay, doubled per retry (full jitter). Default 500 ms. */
  baseDelayMs?: number;
  /** Longest back-off delay. Default 10000 ms. */
  maxDelayMs?: number;
  /** Longest a connection may stay silent. Default 30000 ms. */
  idleTimeoutMs?: number;
}

export interface FileOutcome {
  /** skipped: a complete copy was there; resumed: a `.part` file was completed with Range. */
  status: 'downloaded' | 'resumed' | 'skipped';
  /** Size of the file now in place. */
  bytes: number;
}

/** The received size never matched the announced one, every try. */
export class SizeMismatchError extends Error {
  override readonly name = 'SizeMismatchError';
  constructor(
    url: string,
    readonly expected: number,
    readonly received: number,
  ) {
    super(`${redactUrl(url)}: expected ${expected} bytes, received ${received}`);
  }
}

/** Part file suffix: the file is written there and renamed when complete. */
export const PART_SUFFIX = '.part';

/**
 * Downloads `url` to `dest` (a path prepared by prepareOutputPath). A regular file already at
 * `dest` whose size equals the server's (HEAD, else a one-byte Range probe) is kept. Otherwise the
 * bytes go to `dest.part`: an existing part is resumed with `Range: bytes=<size>-` (206 appends, 200
 * starts over, 416 with the same total means it was already complete). Throws ApiError for answers
 * that are not transient (403 URL_EXPIRED included: the caller refreshes the URL and calls again,
 * keeping the part), SizeMismatchError, or the last transient error once the tries are spent.
 */
export async function downloadFile(url: string, dest: string, options: DownloadFileOptions = {}): Promise<FileOutcome> {
  const part = dest + PART_SUFFIX;
  const attempts = options.attempts ?? 5;
  const backoff = { baseDelayMs: options.baseDelayMs ?? 500, maxDelayMs: options.maxDelayMs ?? 10_000 };
  const http = { signal: options.signal, idleTimeoutMs: options.idleTimeoutMs };
  const report = options.onProgress ?? (() => undefined);

  const existing = await lstat(dest).catch(() => null);
  if (existing?.isFile()) {
    const total = await retrying(() => probeSize(url, http), attempts, backoff, options.signal);
    if (total === existing.size) {
      await rm(part, { force: true });
      report(total, total);
      return { status: 'skipped', bytes: total };
    }
  }

  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await sleep(backoffDelay(attempt - 1, backoff), options.signal);
    const partSize = (await lstat(part).catch(() => null))?.size ?? 0;
    let response: IncomingMessage;
    try {
      response = await openUrl(url, { ...http, headers: partSize > 0 ? { range: `bytes=${partSize}-` } : {} });
    } catch (err) {
      if (!isTransient(err)) throw err;
      lastError = err;
      continue;
    }
    const status = response.statusCode ?? 0;
    const range = parseContentRange(response.headers['content-range']);
    if (status === 416) {
      response.resume();
      // The part already holds every byte (a previous run stopped just before the rename).
      if (partSize > 0 && range?.total === partSize) return finish(part, dest, partSize, 'resumed', report);
      await rm(part, { force: true });
      lastError = new SizeMismatchError(url, range?.total ?? 0, partSize);
      continue;
    }
    let append = false;
    let total: number | null;
    if (status === 206) {
      if (range?.start !== partSize || range.total === null) {
        // Not the range asked for: drop the part and fetch the whole file.
        response.destroy();
        await rm(part, { force: true });
        lastError = new Error(`${redactUrl(url)} answered an unexpected range`);
        continue;
      }
      append = true;
      total = range.total;
    } else {
      total = contentLength(response);
    }
    const startAt = append ? partSize : 0;
    report(startAt, total);
    try {
      await writeBody(response, part, append, (n) => report(startAt + n, total));
    } catch (err) {
      if (options.signal?.aborted) throw options.signal.reason;
      lastError = err instanceof NetworkError ? err : new NetworkError('GET', redactUrl(url), err);
      continue;
    }
    const size = (await stat(part)).size;
    if (total === null && !append) {
      // A body sent without a length (ended by closing the connection) that a dropped link cut short
      // looks complete: keep it only if the size the server announces for the file agrees.
      try {
        total = await probeSize(url, http);
      } catch (err) {
        if (!isTransient(err)) throw err;
        lastError = err;
        continue;
      }
    }
    if (total === null || size === total)
      return finish(part, dest, size, partSize > 0 && append ? 'resumed' : 'downloaded', report);
    // Longer than announced cannot be resumed; shorter is resumed on the next try.
    if (size > total) await rm(part, { force: true });
    lastError = new SizeMismatchError(url, total, size);
  }
  throw lastError;
}

async function finish(
  part: string,
  dest: string,
  bytes: number,
  status: FileOutcome['status'],
  report: NonNullable<DownloadFileOptions['onProgress']>,
): Promise<FileOutcome> {
  await rename(part, dest);
  report(bytes, bytes);
  return { status, bytes };
}

/** Streams the body into the part file (appending or from scratch), never following a symlink there. */
async function writeBody(
  response: IncomingMessage,
  part: string,
  append: boolean,
  onWritten: (n: number) => void,
): Promise<void> {
  const flags =
    fsConstants.O_WRONLY |
    fsConstants.O_CREAT |
    (fsConstants.O_NOFOLLOW ?? 0) |
    (append ? fsConstants.O_APPEND : fsConstants.O_TRUNC);
  const handle = await open(part, flags, 0o644);
  let written = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      written += chunk.length;
      onWritten(written);
      cb(null, chunk);
    },
  });
  // The stream owns the handle and closes it when done or failed.
  await pipeline(response, counter, createWriteStream('', { fd: handle, flush: true }));
}

/** The file's full size on the server: HEAD, or a one-byte Range GET where HEAD is not served. */
async function probeSize(url: string, http: { signal?: AbortSignal; idleTimeoutMs?: number }): Promise<number | null> {
  try {
    const head = await openUrl(url, { ...http, method: 'HEAD' });
    head.resume();
    const size = contentLength(head);
    if (size !== null) return size;
  } catch (err) {
    if (!(err instanceof ApiError && (err.status === 405 || err.status === 501))) throw err;
  }
  const res = await openUrl(url, { ...http, headers: { range: 'bytes=0-0' } });
  res.destroy();
  if (res.statusCode === 206) return parseContentRange(res.headers['content-range'])?.total ?? null;
  return contentLength(res);
}

async function retrying<T>(
  fn: () => Promise<T>,
  attempts: number,
  backoff: { baseDelayMs: number; maxDelayMs: number },
  signal?: AbortSignal,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt + 1 >= attempts || !isTransient(err)) throw err;
      await sleep(backoffDelay(attempt, backoff, err instanceof ApiError ? err.retryAfterMs : undefined), signal);
    }
  }
}

/** Network failures, 429 and 5xx are worth another try; other answers are not. */
export function isTransient(err: unknown): boolean {
  if (err instanceof NetworkError) return true;
  return err instanceof ApiError && (err.status === 429 || err.status >= 500);
}
