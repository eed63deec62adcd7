// Error bodies of downloads: the service's own body when it answered, else one in the same shape.
import type { ErrorBody, ErrorDetail } from '../../shared/api/error-body.js';
import { ApiError, NetworkError } from '../../shared/client/errors.js';
import { DaemonError } from '../errors.js';
import { SizeMismatchError } from './file.js';

/**
 * Names of the download errors the daemon reports itself (not yet in shared/daemon/errors.ts):
 * JOB_NOT_COMPLETED, OUTPUTS_DELETED, DOWNLOAD_INCOMPLETE, SIZE_MISMATCH, NETWORK_ERROR, DOWNLOAD_FAILED.
 */
export type DownloadErrorName =
  | 'JOB_NOT_COMPLETED'
  | 'OUTPUTS_DELETED'
  | 'DOWNLOAD_INCOMPLETE'
  | 'SIZE_MISMATCH'
  | 'NETWORK_ERROR'
  | 'DOWNLOAD_FAILED';

export function outputError(
  name: DownloadErrorName,
  message: string,
  details: ErrorDetail[] = [],
  metadata: Record<string, unknown> = {},
): ErrorBody {
  return { name, message, details, type: 'api', metadata };
}

/** The body to show for any error of a download; URLs in messages are already without their query. */
export function errorBodyOf(err: unknown): ErrorBody {
  if (err instanceof ApiError) return err.body;
  if (err instanceof DaemonError) return err.toBody();
  if (err instanceof SizeMismatchError) {
    return outputError(
      'SIZE_MISMATCH',
      `${err.message}: the file was not kept. Run the download again (it resumes); if this keeps happening, ` +
        'something between this computer and the farm (a proxy or a cache) changes the files: ' +
        "tell the farm's operator.",
      [],
      {
        expected: err.expected,
        received: err.received,
      },
    );
  }
  if (err instanceof NetworkError)
    return outputError(
      'NETWORK_ERROR',
      `${err.message}: check the connection to the service and run the download again.`,
    );
  const message = err instanceof Error ? err.message : String(err);
  return outputError('DOWNLOAD_FAILED', `${message}: run the download again.`);
}
