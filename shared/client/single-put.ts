// The spec's upload made sturdy: POST /uploads, then one PUT of the whole file, with back-off
// for as long as the upload target is valid; a target about to expire is replaced by a new one.
// A PUT whose connection failed is continued from the bytes the service holds where it offers
// the resumable-uploads extension (GET /uploads/{slug}, then a PUT of the rest with
// Content-Range), and sent again from the start where it does not (the spec has no resumption).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { CreateUploadBody, UploadState, UploadTarget } from '../api/upload.js';
import { ReconnectBudget, sleep, type BackoffOptions } from './backoff.js';
import { ApiError, LocalFileError, NetworkError } from './errors.js';
import { putStream } from './put.js';

/** What the single PUT needs of the API. */
export interface UploadTargetSource {
  createUpload(body: CreateUploadBody, options: { signal?: AbortSignal | undefined }): Promise<UploadTarget>;
  /**
   * How far the PUT to a target got (extension resumable-uploads); undefined where the service
   * does not keep the bytes of a broken PUT. Absent: never asked, a retry sends the whole file.
   */
  uploadState?(slug: string, options: { signal?: AbortSignal | undefined }): Promise<UploadState | undefined>;
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
  /** Bytes the retry does not send again: the service holds them (0: the whole file is sent). */
  fromByte: number;
}

export interface SinglePutOptions extends BackoffOptions {
  filePath: string;
  body: CreateUploadBody;
  contentType: string;
  /**
   * Called as bytes are handed to the socket, counting those the service held before a resumed PUT; starts again from 0
   * on a retry that sends the whole file.
   */
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
  /** Bytes of the file that went in more than one PUT (cut PUTs' bytes the service did not keep). */
  resentBytes: number;
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
  /** Where the next PUT starts: the bytes the service holds of this target's file. */
  let from = 0;
  let handed = 0;
  let resentBytes = 0;
  for (let retries = 0; ; retries++) {
    let error: Error;
    let delayMs: number;
    try {
      if (totalBytes === 0) options.onProgress?.(0, 0);
      const start = from;
      handed = start;
      await putStream({
        url: target.uploadUrl,
        body: createReadStream(options.filePath, { start }),
        length: totalBytes - start,
        headers: {
          'content-type': options.contentType,
          ...(start > 0 ? { 'content-range': `bytes ${start}-${totalBytes - 1}/${totalBytes}` } : {}),
        },
        onProgress: (sent) => {
          handed = start + sent;
          options.onProgress?.(handed, totalBytes);
        },
        signal,
        idleTimeoutMs: options.idleTimeoutMs,
        userAgent: options.userAgent,
      });
      return { target, retries, resentBytes };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      // The attempt that lost its connection had in fact stored the file: it is there.
      if (lastError && err instanceof ApiError && err.errorName === 'UPLOAD_ALREADY_COMPLETED')
        return { target, retries, resentBytes };
      const mismatch = err instanceof ApiError && err.errorName === 'UPLOAD_RESUME_MISMATCH';
      if (!(isExpired(err) || isTransient(err) || mismatch)) throw err;
      // A resume the service did not hold the start of is answered at once: no pause needed.
      const pause = mismatch ? 0 : budget.failed(retries, err instanceof NetworkError);
      if (pause === undefined) throw err;
      error = err as Error;
      delayMs = pause;
    }
    lastError = error;
    // The storage's clock is the one that counts: an expired answer renews whatever ours says.
    const newTarget = isExpired(error) || Date.parse(target.expiresAt) - (Date.now() + delayMs) < options.renewMarginMs;
    const sentUpTo = handed;
    from = 0;
    if (!newTarget && api.uploadState) {
      await sleep(delayMs, signal);
      // Unanswered: the whole file is sent again, as without the extension.
      const state = await api.uploadState(target.slug, { signal }).catch(() => {
        if (signal?.aborted) throw signal.reason;
        return undefined;
      });
      if (state?.completed) return { target, retries, resentBytes };
      if (state && state.totalBytes === totalBytes && state.receivedBytes < totalBytes) from = state.receivedBytes;
      resentBytes += Math.max(0, sentUpTo - from);
      options.onRetry?.({ retry: retries + 1, error, delayMs, newTarget, fromByte: from });
      continue;
    }
    resentBytes += sentUpTo;
    options.onRetry?.({ retry: retries + 1, error, delayMs, newTarget, fromByte: 0 });
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
