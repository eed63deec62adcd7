// Errors the client throws. Callers tell them apart with `instanceof`; ApiError also carries the
// spec's error body so they can match on `errorName` (see shared/errors.ts for the registry).
import { ErrorBody } from '../api/error-body.js';
import type { FailedReason, Job } from '../api/job.js';
import { ERRORS, type ErrorName } from '../errors.js';

/** An HTTP answer outside 2xx, from the API or from the presigned storage URL. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** HTTP status code of the answer. */
  readonly status: number;
  /** The spec's error body; synthesized when the answer was not one (e.g. a proxy's HTML page). */
  readonly body: ErrorBody;
  /** Seconds the server asked to wait (Retry-After), converted to milliseconds, if it said. */
  readonly retryAfterMs: number | undefined;

  constructor(method: string, url: string, status: number, body: ErrorBody, retryAfterMs?: number) {
    super(`${method} ${url} failed with ${status} ${body.name}: ${body.message}`);
    this.status = status;
    this.body = body;
    this.retryAfterMs = retryAfterMs;
  }

  /** `body.name`: one of the registry's names for answers of this service. */
  get errorName(): ErrorName | (string & {}) {
    return this.body.name;
  }
}

/** The request never got an HTTP answer: connection refused or reset, DNS failure, or timeout. */
/** A lost connection to a service that had answered: how long ago, and how long the client tried again. */
export interface Dropped {
  answeredAgoMs: number;
  /** Time spent trying again before giving up; 0 when the call could not be repeated. */
  waitedMs: number;
}

export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  /** True when the client gave up because `requestTimeoutMs` (or an upload's idle timeout) passed. */
  readonly timedOut: boolean;
  /**
   * Set when this client had an answer from the service before the connection broke: the URL
   * works, so the connection dropped (and did not come back within the client's patience).
   */
  readonly dropped?: Dropped;
  readonly method: string;
  readonly url: string;

  constructor(method: string, url: string, cause: unknown, timedOut = false, dropped?: Dropped) {
    const why = timedOut ? 'timed out' : cause instanceof Error ? describeCause(cause) : String(cause);
    const waited = dropped?.waitedMs ? ` and did not come back within ${Math.round(dropped.waitedMs / 1000)} s` : '';
    const after = dropped
      ? `; the service answered ${Math.round(dropped.answeredAgoMs / 1000)} s before, so the connection ` +
        `dropped${waited}`
      : '';
    super(`${method} ${url}: ${why}${after}`, { cause });
    this.timedOut = timedOut;
    this.method = method;
    this.url = url;
    if (dropped) this.dropped = dropped;
  }
}

/** A 2xx answer whose body does not match the contract's response schema. */
export class ResponseFormatError extends Error {
  override readonly name = 'ResponseFormatError';
  readonly status: number;

  constructor(method: string, url: string, status: number, cause: unknown) {
    super(`${method} ${url} answered ${status} with a body that does not match the API contract`, { cause });
    this.status = status;
  }
}

/**
 * A project file's bytes no longer hash to what the caller said (it changed after it was hashed,
 * or while being sent), even after sending it again: hash the files again, then upload.
 */
export class BlobChangedError extends Error {
  override readonly name = 'BlobChangedError';
  /** The files (their `source` paths) holding the blob that did not match. */
  readonly files: readonly string[];

  constructor(files: readonly string[], cause?: unknown) {
    super(
      `${files.join(', ')} changed after it was hashed: hash the project's files again (pack it again), then upload`,
      { cause },
    );
    this.files = files;
  }
}

/**
 * A file on this machine could not be read for an upload (moved, deleted, unreadable): a local
 * problem, never a network or service one, so it is not retried and never blamed on the service.
 */
export class LocalFileError extends Error {
  override readonly name = 'LocalFileError';
  /** The file that could not be read. */
  readonly file: string;
  /** The system error code (ENOENT, EACCES, ...), when there was one. */
  readonly code: string | undefined;

  constructor(file: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    const why = code === 'ENOENT' ? 'it was moved or deleted' : cause instanceof Error ? cause.message : String(cause);
    super(`${file} could not be read for the upload (${why})`, { cause });
    this.file = file;
    this.code = code;
  }
}

/**
 * The blob upload asked for part URLs again and again, and each time they had expired before the
 * parts could be sent: by this machine's clock, which may be far ahead of the service's, or on a
 * link too slow for the URLs' lifetime. Sending again without fixing that fails the same way.
 */
export class UploadUrlsExpiredError extends Error {
  override readonly name = 'UploadUrlsExpiredError';
  /** Queries made before giving up. */
  readonly queries: number;

  constructor(queries: number) {
    super(`the service's upload URLs had expired each time before the parts could be sent (${queries} queries)`);
    this.queries = queries;
  }
}

/** `waitForStatus` saw the job reach a final state it was not waiting for (e.g. failed, canceled). */
export class JobStoppedError extends Error {
  override readonly name = 'JobStoppedError';
  readonly job: Job;
  readonly failedReason: FailedReason | null;

  constructor(job: Job, targets: readonly string[]) {
    const reason = job.failedReason ? ` (${job.failedReason.name}: ${failedMessage(job.failedReason)})` : '';
    super(`job ${job.id} stopped in "${job.status}" while waiting for ${targets.join(' or ')}${reason}`);
    this.job = job;
    this.failedReason = job.failedReason ?? null;
  }

  get status(): Job['status'] {
    return this.job.status;
  }
}

/** `waitForStatus` gave up after its `timeoutMs`; `lastJob` is the last state seen, if any. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
  readonly lastJob: Job | undefined;

  constructor(jobId: string, timeoutMs: number, lastJob?: Job) {
    const seen = lastJob ? ` (last seen: "${lastJob.status}")` : '';
    super(`job ${jobId} did not reach the awaited status within ${timeoutMs} ms${seen}`);
    this.lastJob = lastJob;
  }
}

function failedMessage(reason: FailedReason): string {
  const m = reason.errorDetails['message'];
  return typeof m === 'string' ? m : reason.type;
}

function describeCause(err: Error): string {
  // undici reports "fetch failed" and hides the useful part (ECONNREFUSED, ...) in `cause`.
  const inner = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${inner}`;
}

// Statuses that only one registry error answers, so a non-JSON answer can still be named usefully.
const NAME_BY_STATUS = new Map<number, ErrorName>();
{
  const seen = new Map<number, number>();
  for (const [name, spec] of Object.entries(ERRORS) as [ErrorName, { status: number }][]) {
    seen.set(spec.status, (seen.get(spec.status) ?? 0) + 1);
    NAME_BY_STATUS.set(spec.status, name);
  }
  for (const [status, count] of seen) if (count > 1) NAME_BY_STATUS.delete(status);
  // 429 is also TOO_MANY_STREAMS (always a JSON body from the service): a 429 without one comes
  // from a proxy's limiter, and "rate limited, wait Retry-After" is what it means.
  NAME_BY_STATUS.set(429, 'RATE_LIMITED');
}

/**
 * The error body of an answer: parsed when the text is the spec's error body, otherwise a
 * synthesized one (name `HTTP_<status>` unless the status maps to a single registry name) that
 * keeps the start of the raw text in `metadata.rawBody`.
 */
export function errorBodyFrom(status: number, statusText: string, text: string, contentType: string | null): ErrorBody {
  try {
    const parsed = ErrorBody.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
  } catch {
    // Not JSON: fall through to the synthesized body.
  }
  const name = NAME_BY_STATUS.get(status) ?? `HTTP_${status}`;
  const message = statusText ? `HTTP ${status} ${statusText}` : `HTTP ${status}`;
  const metadata: Record<string, unknown> = { rawBody: text.slice(0, 2000) };
  if (contentType) metadata['contentType'] = contentType;
  return { message, name, details: [], type: 'api', metadata };
}
