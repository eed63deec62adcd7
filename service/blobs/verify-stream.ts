// Streams that check bytes on their way into storage. They fail before the end of the stream
// (in flush), so the storage put that reads them never completes: the filesystem adapter leaves
// no file, the S3 adapter aborts its upload. Nothing unverified is ever stored under a blob's key.
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import type { BlobRef } from '../../shared/api/blob-upload.js';

/** The bytes were not the length they had to be (a part or a whole blob). */
export class LengthMismatchError extends Error {
  constructor(
    readonly expected: number,
    readonly received: number,
    /** True when more arrived than expected (the count then stops at expected + 1). */
    readonly tooLong: boolean,
  ) {
    super(`expected ${expected} bytes, ${tooLong ? 'got more' : `got ${received}`}`);
  }
}

/** The bytes did not hash to the blob's sha256. */
export class HashMismatchError extends Error {
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`bytes hash to ${actual}, not ${expected}`);
  }
}

/** Passes exactly `length` bytes through: one more fails at once (a gzip bomb stops there), fewer fail at the end. */
export function exactLength(length: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      seen += chunk.length;
      if (seen > length) return done(new LengthMismatchError(length, seen, true));
      done(null, chunk);
    },
    flush(done: TransformCallback) {
      done(seen === length ? null : new LengthMismatchError(length, seen, false));
    },
  });
}

/** Passes a blob's bytes through, failing unless they are exactly its size and hash to its sha256. */
export function verifiedBlob(blob: BlobRef): Transform {
  let seen = 0;
  const hash = createHash('sha256');
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      seen += chunk.length;
      if (seen > blob.size) return done(new LengthMismatchError(blob.size, seen, true));
      hash.update(chunk);
      done(null, chunk);
    },
    flush(done: TransformCallback) {
      if (seen !== blob.size) return done(new LengthMismatchError(blob.size, seen, false));
      const actual = hash.digest('hex');
      done(actual === blob.sha256 ? null : new HashMismatchError(blob.sha256, actual));
    },
  });
}
