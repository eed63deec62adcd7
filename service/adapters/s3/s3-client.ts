import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { S3Settings } from '../../config.js';

export interface S3ClientOptions {
  /**
   * Credentials to use instead of the AWS default provider chain (AWS_ACCESS_KEY_ID /
   * AWS_SECRET_ACCESS_KEY, shared config files, instance or task roles). Tests pass the local
   * server's keys here so nothing touches process.env. Default: the default provider chain.
   */
  credentials?: S3ClientConfig['credentials'];
}

/** An S3 client for the service's settings. */
export function createS3Client(s: S3Settings, opts: S3ClientOptions = {}): S3Client {
  return new S3Client({
    region: s.region,
    ...(s.endpoint ? { endpoint: s.endpoint } : {}),
    forcePathStyle: s.forcePathStyle,
    ...(opts.credentials
      ? { credentials: opts.credentials }
      : s.accessKeyId && s.secretAccessKey
        ? { credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey } }
        : {}),
    // The SDK's default checksums (CRC32 headers, aws-chunked bodies) are not understood by many
    // S3-compatible servers, and would be baked into presigned PUT URLs as the checksum of an
    // empty body. Send them only where the API requires one (DeleteObjects); put() computes its
    // own SHA-256 and TLS covers the transfer.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** The HTTP status of an SDK error, when it came from the server. */
export function httpStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}
