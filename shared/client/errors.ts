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
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  /** True when the client gave up because `requestTimeoutMs` (or an upload's idle timeout) passed. */
  readonly timedOut: boolean;

  constructor(method: string, url: string, cause: unknown, timedOut = false) {
    const why = timedOut ? 'timed out' : cause instanceof Error ? describeCause(cause) : String(cause);
    super(`${method} ${url}: ${why}`, { cause });
    this.timedOut = timedOut;
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
    super(`${files.join(', ')} changed after it was hashed: hash the project's files again (pack it again), then upload`, { cause });
    this.files = files;
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
