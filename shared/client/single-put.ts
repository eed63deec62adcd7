// The spec's upload made sturdy: POST /uploads, then one PUT of the whole file, sent again from
// the start when the connection fails (the spec has no resumable upload), with back-off, for as
// long as the upload target is valid; a target about to expire is replaced by a new one.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { CreateUploadBody, UploadTarget } from '../api/upload.js';
import { ReconnectBudget, sleep, type BackoffOptions } from './backoff.js';
import { ApiError, LocalFileError, NetworkError } from './errors.js';
import { putStream } from './put.js';

/** What the single PUT needs of the API. */
export interface UploadTargetSource {
  createUpload(body: CreateUploadBody, options: { signal?: AbortSignal | undefined }): Promise<UploadTarget>;
}

/** A PUT that is about to be sent again. */
export interface UploadRetry {
  /** 1 for the first retry. */
  retry: number;
  /** Why the previous attempt failed. */
  error: Error;
  /** Pause before this retry, ms. */
  delayMs: number;
  /** True when this retry goes to a new upload target (the old one expired or was about to). */
  newTarget: boolean;
}

export interface SinglePutOptions extends BackoffOptions {
  filePath: string;
  body: CreateUploadBody;
  contentType: string;
  /** Called as bytes are handed to the socket; starts again from 0 on a retry. */
  onProgress?: ((sentBytes: number, totalBytes: number) => void) | undefined;
  /** Told before each retry. */
  onRetry?: ((retry: UploadRetry) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** Retries after the first PUT (network errors and 502/503/504 only; other answers are final). */
  maxRetries: number;
  /** A lost connection is tried again past maxRetries until it has been lost this long, ms. Default 0. */
  patienceMs?: number;
  /** A retry asks for a new upload target when less than this is left before `expiresAt`, ms. */
  renewMarginMs: number;
  idleTimeoutMs: number;
  userAgent: string;
}

export interface SinglePutResult {
  /** The target the file landed at: create the job from its slug. */
  target: UploadTarget;
  /** PUTs sent again after a failed one. */
  retries: number;
}

/** Answers a gateway or an overloaded storage gives before the request did anything. */
const TRANSIENT_STATUSES = new Set([502, 503, 504]);

/**
 * Creates an upload target and PUTs the file to it, retrying per the options. Throws the last
 * error when the retries are spent, an ApiError at once for a final answer (413, 415, 403 ...),
 * LocalFileError when the file cannot be read, and the signal's reason when aborted.
 */
export async function singlePutUpload(api: UploadTargetSource, options: SinglePutOptions): Promise<SinglePutResult> {
  const { signal } = options;
  const totalBytes = (
    await stat(options.filePath).catch((err: unknown) => {
      throw new LocalFileError(options.filePath, err);
    })
  ).size;
  let target = await api.createUpload(options.body, { signal });
  let lastError: Error | undefined;
  const budget = new ReconnectBudget({ ...options, patienceMs: options.patienceMs ?? 0 });
  for (let retries = 0; ; retries++) {
    let error: Error;
    let delayMs: number;
    try {
      if (totalBytes === 0) options.onProgress?.(0, 0);
      await putStream({
        url: target.uploadUrl,
        body: createReadStream(options.filePath),
        length: totalBytes,
        headers: { 'content-type': options.contentType },
        onProgress: (sent) => options.onProgress?.(sent, totalBytes),
        signal,
        idleTimeoutMs: options.idleTimeoutMs,
        userAgent: options.userAgent,
      });
      return { target, retries };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      // The attempt that lost its connection had in fact stored the file: it is there.
      if (lastError && err instanceof ApiError && err.errorName === 'UPLOAD_ALREADY_COMPLETED') return { target, retries };
      if (!(isExpired(err) || isTransient(err))) throw err;
      const pause = budget.failed(retries, err instanceof NetworkError);
      if (pause === undefined) throw err;
      error = err as Error;
      delayMs = pause;
    }
    lastError = error;
    // The storage's clock is the one that counts: an expired answer renews whatever ours says.
    const newTarget = isExpired(error) || Date.parse(target.expiresAt) - (Date.now() + delayMs) < options.renewMarginMs;
    options.onRetry?.({ retry: retries + 1, error, delayMs, newTarget });
    await sleep(delayMs, signal);
    if (newTarget) target = await api.createUpload(options.body, { signal });
  }
}

function isExpired(err: unknown): boolean {
  return err instanceof ApiError && err.errorName === 'URL_EXPIRED';
}

function isTransient(err: unknown): boolean {
  if (err instanceof NetworkError) return true;
  return err instanceof ApiError && TRANSIENT_STATUSES.has(err.status);
}
