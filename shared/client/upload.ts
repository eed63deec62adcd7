// The spec's upload: one PUT of a whole file (.blend or .zip) to a presigned upload URL, streamed
// from disk.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { CONTENT_TYPES, type FileType } from '../api/upload.js';
import { putStream } from './put.js';

export interface UploadFileOptions {
  /** Content-Type of the PUT. Default: from the extension (see `contentTypeFor`). */
  contentType?: string;
  /** Called as bytes are handed to the socket; the last call has sentBytes === totalBytes. */
  onProgress?: (sentBytes: number, totalBytes: number) => void;
  signal?: AbortSignal;
  /** Longest the connection may stay silent before the upload fails. Default: 30000. */
  idleTimeoutMs?: number;
  /** User-Agent header. Default: `renderbridge-client`. */
  userAgent?: string;
}

export interface UploadResult {
  /** HTTP status of the storage's answer (2xx). */
  readonly status: number;
  /** Bytes sent: the file's size. */
  readonly bytes: number;
}

/** The upload `fileType` of a file name, from its extension; undefined when neither .blend nor .zip. */
export function fileTypeFor(fileName: string): FileType | undefined {
  const ext = extname(fileName).toLowerCase();
  if (ext === '.zip') return 'zip';
  if (ext === '.blend') return 'blend';
  return undefined;
}

/** The Content-Type to PUT a file with: the preferred one of its file type, else octet-stream. */
export function contentTypeFor(fileName: string): string {
  const type = fileTypeFor(fileName);
  return type ? (CONTENT_TYPES[type][0] ?? 'application/octet-stream') : 'application/octet-stream';
}

/**
 * PUTs `filePath` to `uploadUrl` with Content-Length from the file's size, streaming it. No
 * Authorization header: the URL is presigned. Throws ApiError on a non-2xx answer (body parsed
 * when it is the spec's error body), NetworkError when the connection fails or idles too long,
 * and the signal's reason when aborted. Not retried: `RenderJobClient.uploadProject` retries.
 */
export async function uploadFile(
  uploadUrl: string,
  filePath: string,
  options: UploadFileOptions = {},
): Promise<UploadResult> {
  options.signal?.throwIfAborted();
  const totalBytes = (await stat(filePath)).size;
  let sentBytes = 0;
  if (totalBytes === 0) options.onProgress?.(0, 0);
  const { status } = await putStream({
    url: uploadUrl,
    body: createReadStream(filePath),
    length: totalBytes,
    headers: { 'content-type': options.contentType ?? contentTypeFor(filePath) },
    onProgress: (sent) => {
      sentBytes = sent;
      options.onProgress?.(sent, totalBytes);
    },
    signal: options.signal,
    idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
    userAgent: options.userAgent ?? 'renderbridge-client',
  });
  return { status, bytes: sentBytes };
}
