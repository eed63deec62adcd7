// A blob whose bytes in object storage do not match its sha256 and size. The service stored it
// only after checking it, so the upload is not at fault: the object was damaged or altered in
// the bucket, or on its way here. The worker retries the task (asTaskOutcome: a transfer that
// went wrong works the next time, maybe on another machine); an object damaged for good fails
// the job once the attempts are spent, with this message (uploading again does not help: the
// service holds the blob, so the client is not asked for it). Such bytes never enter the cache.
import type { BlobRef } from '../../../shared/api/blob-upload.js';

export class BlobIntegrityError extends Error {
  override readonly name = 'BlobIntegrityError';
  readonly code = 'BLOB_INTEGRITY';

  /** `got.sha256` is null when the object was longer than the blob and reading stopped. */
  constructor(
    readonly blob: BlobRef,
    readonly got: { sha256: string | null; size: number },
  ) {
    super(
      `The stored blob ${blob.sha256} (${blob.size} bytes) read back as ` +
        (got.sha256 === null ? `more than ${blob.size} bytes` : `${got.size} bytes with sha256 ${got.sha256}`) +
        '; it was damaged in storage or on its way to this worker. The task is retried; if the stored copy is ' +
        "damaged for good, the farm's operator must delete it so that the next upload sends it again.",
    );
  }

  get details(): Record<string, unknown> {
    return {
      code: this.code,
      sha256: this.blob.sha256,
      size: this.blob.size,
      gotSha256: this.got.sha256,
      gotSize: this.got.size,
    };
  }
}
