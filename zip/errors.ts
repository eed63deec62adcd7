// The errors zip/ throws. They say what went wrong with an archive or its unpacking and know
// nothing of tasks or jobs: whoever unpacks decides what each means for them (the worker in
// service/worker/outcomes.ts asTaskOutcome).

export type UnpackErrorCode =
  | 'ZIP_PATH_TRAVERSAL'
  | 'ZIP_ABSOLUTE_PATH'
  | 'ZIP_BAD_NAME'
  | 'ZIP_DUPLICATE_NAME'
  | 'ZIP_SYMLINK'
  | 'ZIP_SPECIAL_FILE'
  | 'ZIP_TOO_MANY_ENTRIES'
  | 'ZIP_TOO_LARGE'
  | 'ZIP_OVERLAPPING_ENTRIES'
  | 'ZIP_ENCRYPTED'
  | 'ZIP_UNSUPPORTED_METHOD'
  | 'ZIP_SIZE_MISMATCH'
  | 'ZIP_CORRUPT'
  | 'ZIP_BAD_MANIFEST'
  | 'SOURCE_BAD_NAME'
  | 'SCENE_FILE_MISSING'
  | 'SCENE_FILE_AMBIGUOUS'
  | 'SCENE_FILE_NOT_FOUND'
  | 'ADDON_PATH_UNKNOWN'
  | 'ADDON_MISSING';

/**
 * A refused upload: the archive (or the project in it) breaks a rule, so unpacking it again
 * cannot help. `code` is stable; `details` says which entry and why, for the client.
 */
export class UnpackError extends Error {
  override readonly name = 'UnpackError';
  readonly code: UnpackErrorCode;
  readonly details: Record<string, unknown>;

  constructor(
    code: UnpackErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.code = code;
    this.details = details;
  }
}

/**
 * The disk cannot hold the unpacked project plus the space kept free. The machine is at fault,
 * not the upload: the same archive may unpack later, or elsewhere.
 */
export class DiskSpaceError extends Error {
  override readonly name = 'DiskSpaceError';
  readonly code = 'WORKER_DISK_FULL';
  readonly freeBytes: number;
  readonly neededBytes: number;
  readonly minFreeBytes: number;

  constructor(freeBytes: number, neededBytes: number, minFreeBytes: number) {
    super(
      `The worker's disk has ${freeBytes} bytes free; unpacking this project needs ${neededBytes} bytes and ` +
        `keeps ${minFreeBytes} bytes free for the render. Free space in the worker's work folder; the task is ` +
        `retried.`,
    );
    this.freeBytes = freeBytes;
    this.neededBytes = neededBytes;
    this.minFreeBytes = minFreeBytes;
  }

  /** What the refusal carried before zip/ had its own errors: the code and the three sizes. */
  get details(): Record<string, unknown> {
    return {
      code: this.code,
      freeBytes: this.freeBytes,
      neededBytes: this.neededBytes,
      minFreeBytes: this.minFreeBytes,
    };
  }
}

/** Unpacking stopped because its AbortSignal fired; `reason` is the signal's reason. */
export class UnpackAbortedError extends Error {
  override readonly name = 'UnpackAbortedError';
  readonly reason: unknown;

  constructor(reason: unknown) {
    super(
      reason instanceof Error
        ? reason.message
        : reason === undefined
          ? 'unpacking aborted'
          : `unpacking aborted: ${String(reason)}`,
      { cause: reason },
    );
    this.reason = reason;
  }
}
