// The upload step of a submission: the pack's files as blobs when the service offers the
// content-addressed upload (only what it lacks is sent), else the spec's single PUT of the zip,
// which the packer writes on demand. Either way the answer is an upload slug for POST /jobs.
import path from 'node:path';
import type { RenderJobClient } from '../../shared/client/client.js';
import { BlobChangedError, LocalFileError } from '../../shared/client/errors.js';
import { TransferRate } from '../../shared/client/transfer-rate.js';
import type { PackResult, Submission, Transfer, UploadMode } from '../../shared/daemon/submission-schemas.js';
import type { Packer } from '../ports.js';
import { SourceChangedError } from '../../shared/client/put.js';
import { changedAfterPacking } from '../pack/snapshot.js';

/** The upload state a submission shows (Submission.upload). */
export type UploadState = NonNullable<Submission['upload']>;

export interface UploadPackOptions {
  signal?: AbortSignal | undefined;
  /** Blob parts sent at once. Default 4. */
  concurrency?: number | undefined;
  /** Told as the upload moves. */
  onUpload: (state: UploadState) => void;
  /** Told while the packer writes the zip for a service without the blob upload. */
  onZip: (progress: Transfer) => void;
}

export interface UploadedPack {
  slug: string;
  mode: UploadMode;
}

const BLOB_EXTENSION = 'content-addressed-uploads';

/**
 * Uploads the pack and answers the slug. A pack with files goes as blobs when the service lists
 * the extension, read from the pack's snapshot (Packer.uploadSource); a user's own .zip (no files)
 * and any pack sent to a service without it go by single PUT. A file that changed, moved or
 * vanished since it was packed fails at once with PACK_CHANGED naming the artist's file.
 */
export async function uploadPack(
  client: RenderJobClient,
  packer: Packer,
  pack: PackResult,
  options: UploadPackOptions,
): Promise<UploadedPack> {
  const { signal } = options;
  if (pack.files.length > 0 && (await client.hasExtension(BLOB_EXTENSION, { signal }))) {
    const source = packer.uploadSource?.(pack.packId);
    const original = (file: string): string => source?.original(file) ?? file;
    try {
      const result = await client.uploadBlobs(source?.files ?? pack.files, {
        fileName: projectFileName(pack.sourcePath),
        signal,
        ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
        ...(source ? { checkSource: (blob: { source: string }) => source.check(blob.source) } : {}),
        onProgress: (p) => options.onUpload({ mode: 'blobs', ...p }),
      });
      return { slug: result.upload.slug, mode: 'blobs' };
    } catch (err) {
      if (err instanceof BlobChangedError) throw changedAfterPacking(err.files.map(original).join('", "'), 'changed');
      if (err instanceof LocalFileError)
        throw changedAfterPacking(
          original(err.file),
          err.code === 'ENOENT'
            ? 'was moved or deleted'
            : `could not be read (${err.code ?? (err.cause as Error | undefined)?.message ?? 'unknown error'})`,
        );
      throw err;
    }
  }

  const zipRate = new TransferRate();
  const zipPath =
    pack.zipPath ??
    (await packer.zip(pack.packId, {
      signal,
      onProgress: (done, total) =>
        options.onZip({ bytesDone: done, bytesTotal: total, ...zipRate.update(done, total) }),
    }));
  const rate = new TransferRate();
  let retries = 0;
  let last = { sent: 0, total: 0 };
  const report = (): void =>
    options.onUpload({
      mode: 'single-put',
      bytesDone: last.sent,
      bytesTotal: last.total,
      bytesSkipped: 0,
      retries,
      ...rate.update(last.sent, last.total),
    });
  // A zip that ends before its size (rewritten while being sent) is a local change, named as one.
  const target = await client
    .uploadProject(zipPath, {
      fileType: 'zip',
      signal,
      onProgress: (sent, total) => {
        last = { sent, total };
        report();
      },
      onRetry: () => {
        retries++;
        report();
      },
    })
    .catch((err: unknown) => {
      throw err instanceof SourceChangedError
        ? changedAfterPacking(zipPath, 'was changed while it was being sent')
        : err;
    });
  return { slug: target.slug, mode: 'single-put' };
}

/** The upload's fileName for a blob project: the packed .blend's or folder's name, as a .zip. */
export function projectFileName(sourcePath: string): string {
  const stem = path
    .basename(sourcePath)
    .replace(/\.blend$/i, '')
    .replace(/[\\/\0]/g, '_')
    .slice(0, 200);
  return `${stem || 'project'}.zip`;
}
