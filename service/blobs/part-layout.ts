// How a blob is cut into parts for upload: every part but the last is `partSize` raw bytes. Pure.
import type { BlobRef } from '../../shared/api/blob-upload.js';

/** Parts of a blob: none for an empty blob (never sent), else ceil(size / partSize). */
export function partCount(size: number, partSize: number): number {
  return size === 0 ? 0 : Math.ceil(size / partSize);
}

/** Offset and raw length of part `partNumber` (1-based), or undefined when the blob has no such part. */
export function partExtent(
  blob: BlobRef,
  partSize: number,
  partNumber: number,
): { offset: number; length: number } | undefined {
  if (!Number.isSafeInteger(partNumber) || partNumber < 1 || partNumber > partCount(blob.size, partSize))
    return undefined;
  const offset = (partNumber - 1) * partSize;
  return { offset, length: Math.min(partSize, blob.size - offset) };
}

/** The blob's name in part URLs and keys: `<sha256>-<size>`. */
export function blobName(blob: BlobRef): string {
  return `${blob.sha256}-${blob.size}`;
}

/** A blob from its `<sha256>-<size>` name, or undefined when the name is not one. */
export function parseBlobName(name: string): BlobRef | undefined {
  const m = /^([0-9a-f]{64})-(0|[1-9][0-9]{0,15})$/.exec(name);
  const size = m ? Number(m[2]) : NaN;
  return m && Number.isSafeInteger(size) ? { sha256: m[1]!, size } : undefined;
}
