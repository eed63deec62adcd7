// The client side of the content-addressed upload extension: a project goes up as blobs named by
// sha256 and size. Ask which blobs the workspace lacks, PUT only their missing parts (several at
// once, each retried alone), then commit the file list for an ordinary upload slug, so POST /jobs
// and everything after it are the spec's flow.
import type {
  BlobQueryBody,
  BlobQueryResult,
  BlobRef,
  CommitUploadBody,
  CommittedUpload,
  BlobPart,
} from '../api/blob-upload.js';
import { ApiError, BlobChangedError, UploadUrlsExpiredError } from './errors.js';
import { sendPart, type BlobFileSource, type PartRetry } from './blob-part.js';
import { SourceChangedError } from './put.js';
import { TransferRate, type TransferEstimate } from './transfer-rate.js';

/** What the upload needs of the API (RenderJobClient has both). */
export interface BlobUploadApi {
  queryBlobs(body: BlobQueryBody, options: { signal?: AbortSignal | undefined }): Promise<BlobQueryResult>;
  commitUpload(body: CommitUploadBody, options: { signal?: AbortSignal | undefined }): Promise<CommittedUpload>;
}

/** One file of the project: where it goes in the project and where its bytes are on this machine. */
export interface ProjectFile extends BlobFileSource {
  /** Archive path in the project. */
  path: string;
}

/** Where an upload stands; every byte count is of raw (not gzip-encoded) bytes. */
export interface BlobUploadProgress extends TransferEstimate {
  /** Bytes of missing parts sent so far. */
  bytesDone: number;
  /** Bytes of the parts the service lacked: what this upload has to send. */
  bytesTotal: number;
  /** Bytes of the project the service already held (whole blobs, parts of an upload resumed). */
  bytesSkipped: number;
  /** Parts sent again after a network error or 5xx. */
  retries: number;
}

export interface UploadBlobsOptions {
  /** The project's name as an upload fileName; must end in .zip. */
  fileName: string;
  /** Parts sent at once. Default 4. */
  concurrency?: number;
  /** Retries of one part after a network error or a 5xx answer. Default 5. */
  maxPartRetries?: number;
  /**
   * A part whose connection was lost is tried again past maxPartRetries until it has been
   * lost this long, ms. Default 0.
   */
  reconnectPatienceMs?: number;
  /** Ceiling of the first retry delay of a part, doubled per retry (full jitter), ms. Default 500. */
  baseDelayMs?: number;
  /** Longest retry delay, ms. Default 30000. */
  maxDelayMs?: number;
  /** Longest a part's connection may stay silent before it fails (and is retried), ms. Default 30000. */
  idleTimeoutMs?: number;
  /** User-Agent of the part PUTs. Default `renderbridge-client`. */
  userAgent?: string;
  /** Stops the upload: requests in flight are cut, and the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Told after each chunk sent, and whenever the byte counts change. */
  onProgress?: (progress: BlobUploadProgress) => void;
  /** Told before a part is sent again. */
  onRetry?: (retry: PartRetry) => void;
  /**
   * Checks that a blob's file still holds what was hashed, before each of its parts is read and
   * after it was sent; what it throws fails the upload at once (see PartSendOptions). Default none.
   */
  checkSource?: (blob: BlobFileSource) => Promise<void>;
}

export interface UploadBlobsResult {
  /** The committed upload: create the job with its slug. */
  upload: CommittedUpload;
  /** Bytes of parts sent (a part sent again after a hash mismatch counts twice). */
  bytesSent: number;
  bytesSkipped: number;
  partsSent: number;
  retries: number;
  /** POST /uploads/blobs/query calls made (more than one: URLs expired, a blob was sent again). */
  queries: number;
}

/** Most queries while sending one set of blobs; each query but the last follows expired URLs or a hash mismatch. */
const MAX_ROUNDS = 20;
/** Commits answered BLOBS_MISSING (blobs collected meanwhile) that are followed by sending them again. */
const MAX_COMMIT_RESENDS = 2;

const keyOf = (b: BlobRef): string => `${b.sha256}-${b.size}`;

/**
 * Uploads the project's files as blobs and commits them; resolves with the committed upload.
 * Files with the same sha256 and size are sent once. Throws BlobChangedError when a blob's bytes
 * do not hash to its sha256 twice in a row (its file changed: the caller hashes again), the
 * ApiError of any answer it cannot recover from, LocalFileError when a file cannot be read, what
 * `checkSource` throws, and the signal's reason when aborted.
 */
export async function uploadBlobs(
  api: BlobUploadApi,
  files: readonly ProjectFile[],
  options: UploadBlobsOptions,
): Promise<UploadBlobsResult> {
  if (files.length === 0) throw new TypeError('uploadBlobs needs at least one file');
  const run = new BlobRun(api, files, options);
  await run.sendMissing(true);
  const entries = files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size }));
  for (let resend = 0; ; resend++) {
    try {
      const upload = await api.commitUpload({ fileName: options.fileName, entries }, { signal: options.signal });
      return { upload, ...run.totals() };
    } catch (err) {
      if (!(err instanceof ApiError && err.errorName === 'BLOBS_MISSING') || resend >= MAX_COMMIT_RESENDS) throw err;
      await run.sendMissing(false);
    }
  }
}

interface PartJob {
  blob: BlobFileSource;
  part: BlobPart;
}

class BlobRun {
  private readonly blobs = new Map<string, BlobFileSource>();
  private readonly sourcesOf = new Map<string, string[]>();
  /** Blobs that already failed their hash once: a second failure is final. */
  private readonly mismatchedOnce = new Set<string>();
  private readonly rate = new TransferRate();
  private bytesDone = 0;
  private bytesTotal = 0;
  private bytesSkipped = 0;
  private partsSent = 0;
  private retries = 0;
  private queries = 0;

  constructor(
    private readonly api: BlobUploadApi,
    files: readonly ProjectFile[],
    private readonly options: UploadBlobsOptions,
  ) {
    for (const f of files) {
      const key = keyOf(f);
      if (!this.blobs.has(key))
        this.blobs.set(key, { sha256: f.sha256, size: f.size, source: f.source, compression: f.compression });
      this.sourcesOf.set(key, [...(this.sourcesOf.get(key) ?? []), f.source]);
    }
  }

  totals(): Omit<UploadBlobsResult, 'upload'> {
    return {
      bytesSent: this.bytesDone,
      bytesSkipped: this.bytesSkipped,
      partsSent: this.partsSent,
      retries: this.retries,
      queries: this.queries,
    };
  }

  /**
   * Queries every blob and sends what the service lacks, querying again after expired URLs or a
   * hash mismatch. An answer lists at most 1,000 parts: a larger project is sent page by page,
   * each page's parts before the next query (its `continueFrom`), so no URL waits long enough to expire.
   */
  async sendMissing(first: boolean): Promise<void> {
    let pending = [...this.blobs.values()];
    for (let round = 0; pending.length > 0; round++) {
      if (round >= MAX_ROUNDS) throw new UploadUrlsExpiredError(MAX_ROUNDS);
      const outcome = await this.sendPages(pending, first && round === 0);
      if (!outcome.expired && outcome.mismatched.size === 0) return;
      for (const key of outcome.mismatched) {
        if (this.mismatchedOnce.has(key)) throw new BlobChangedError(this.sourcesOf.get(key) ?? []);
        this.mismatchedOnce.add(key);
      }
      pending = outcome.again;
    }
  }

  /**
   * One round: the pages of one query of `pending`. Stops after a page whose URLs expired or whose
   * blobs mismatched, answering what to query again: the blobs of the pages seen, then those not reached.
   */
  private async sendPages(
    pending: BlobFileSource[],
    first: boolean,
  ): Promise<{ expired: boolean; mismatched: Set<string>; again: BlobFileSource[] }> {
    const seen = new Map<string, BlobFileSource>();
    const roundStart = this.bytesDone;
    let from = 0;
    let firstPart = 1;
    let toSend: number | undefined;
    for (;;) {
      const blobs = pending.slice(from).map((b) => ({ sha256: b.sha256, size: b.size, compression: b.compression }));
      const answer = await this.api.queryBlobs(
        { blobs, ...(firstPart > 1 ? { firstPart } : {}) },
        { signal: this.options.signal },
      );
      this.queries++;
      const missing = answer.missing.filter((m) => this.blobs.has(keyOf(m)));
      for (const m of missing) seen.set(keyOf(m), this.blobs.get(keyOf(m)) as BlobFileSource);
      const jobs = missing.flatMap((m) =>
        m.parts.filter((p) => !p.uploaded).map((part) => ({ blob: this.blobs.get(keyOf(m)) as BlobFileSource, part })),
      );
      const resumed = missing.flatMap((m) => m.parts).reduce((n, p) => n + (p.uploaded ? p.length : 0), 0);
      if (first) this.bytesSkipped += answer.held.bytes + resumed;
      // The first page says what the whole round lacks (a service without pages: its one answer).
      toSend ??= answer.missingTotal?.bytes ?? jobs.reduce((n, j) => n + j.part.length, 0) + resumed;
      toSend -= resumed;
      this.bytesTotal = roundStart + toSend;
      this.report();
      const outcome = await this.sendAll(jobs, Date.parse(answer.expiresAt));
      const next = answer.continueFrom;
      if (!next || outcome.expired || outcome.mismatched.size > 0) {
        const rest = next ? pending.slice(from + next.index).filter((b) => !seen.has(keyOf(b))) : [];
        return { ...outcome, again: [...seen.values(), ...rest] };
      }
      from += next.index;
      firstPart = next.partNumber;
    }
  }

  /** Sends the parts `concurrency` at a time; stops taking new ones once the URLs expired. */
  private async sendAll(jobs: PartJob[], expiresAtMs: number): Promise<{ expired: boolean; mismatched: Set<string> }> {
    const outer = this.options.signal;
    const stop = new AbortController();
    const signal = outer ? AbortSignal.any([outer, stop.signal]) : stop.signal;
    const mismatched = new Set<string>();
    let expired = false;
    let failure: { error: unknown } | undefined;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (!failure && !expired) {
        const job = jobs[next++];
        if (!job) return;
        // Asking again costs one request; a PUT to an expired URL costs the part's bytes.
        if (Date.now() >= expiresAtMs) {
          expired = true;
          return;
        }
        try {
          await sendPart(job.blob, job.part, this.partOptions(signal));
          this.partsSent++;
        } catch (err) {
          if (err instanceof ApiError && err.errorName === 'URL_EXPIRED') expired = true;
          else if (err instanceof ApiError && err.errorName === 'BLOB_HASH_MISMATCH') mismatched.add(keyOf(job.blob));
          else {
            const error =
              err instanceof SourceChangedError
                ? new BlobChangedError(this.sourcesOf.get(keyOf(job.blob)) ?? [job.blob.source], err)
                : err;
            failure ??= { error };
            stop.abort(error);
          }
        }
      }
    };
    const concurrency = Math.max(1, this.options.concurrency ?? 4);
    await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
    outer?.throwIfAborted();
    if (failure) throw failure.error;
    return { expired, mismatched };
  }

  private partOptions(signal: AbortSignal): Parameters<typeof sendPart>[2] {
    const o = this.options;
    return {
      signal,
      maxRetries: o.maxPartRetries ?? 5,
      patienceMs: o.reconnectPatienceMs ?? 0,
      baseDelayMs: o.baseDelayMs ?? 500,
      maxDelayMs: o.maxDelayMs ?? 30_000,
      idleTimeoutMs: o.idleTimeoutMs ?? 30_000,
      userAgent: o.userAgent ?? 'renderbridge-client',
      checkSource: o.checkSource,
      onBytes: (delta) => {
        this.bytesDone += delta;
        this.report();
      },
      onRetry: (retry) => {
        this.retries++;
        o.onRetry?.(retry);
        this.report();
      },
    };
  }

  private report(): void {
    if (!this.options.onProgress) return;
    const estimate = this.rate.update(this.bytesDone, this.bytesTotal);
    this.options.onProgress({
      bytesDone: this.bytesDone,
      bytesTotal: this.bytesTotal,
      bytesSkipped: this.bytesSkipped,
      retries: this.retries,
      ...estimate,
    });
  }
}
