// What the worker API's storage routes ask of S3 for a worker that holds no bucket key: URLs for
// one PUT of a whole object, and for the parts of a multipart upload (objects over S3's 5 GiB
// single-PUT limit), which the service starts, completes and aborts itself.
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ObjectExistsError } from '../../ports/storage.js';
import { httpStatus } from './s3-client.js';

export interface S3WorkerSignerOptions {
  client: S3Client;
  bucket: string;
  /** The bucket key of an object key (the deployment's prefix added, the key checked). */
  objectKey: (key: string) => string;
}

function seconds(expiresAt: Date): number {
  return Math.max(1, Math.ceil((expiresAt.getTime() - Date.now()) / 1000));
}

export class S3WorkerSigner {
  constructor(private readonly o: S3WorkerSignerOptions) {}

  /**
   * A URL for one PUT of a whole object. It must carry `If-None-Match: *`, signed into the URL, so
   * on AWS S3 and current MinIO it never replaces an object (the routes look first too, for servers
   * that ignore the header).
   */
  async presignWorkerPut(key: string, expiresAt: Date): Promise<{ url: string; headers: Record<string, string> }> {
    const cmd = new PutObjectCommand({ Bucket: this.o.bucket, Key: this.o.objectKey(key), IfNoneMatch: '*' });
    const url = await getSignedUrl(this.o.client, cmd, {
      expiresIn: seconds(expiresAt),
      signableHeaders: new Set(['if-none-match']),
    });
    return { url, headers: { 'if-none-match': '*' } };
  }

  /** Starts a multipart upload; its id names it in the calls below. */
  async startMultipart(key: string): Promise<string> {
    const r = await this.o.client.send(
      new CreateMultipartUploadCommand({ Bucket: this.o.bucket, Key: this.o.objectKey(key) }),
    );
    if (!r.UploadId) throw new Error(`S3 started no multipart upload for ${key}`);
    return r.UploadId;
  }

  /** A URL for one PUT of part `partNumber` (1..10000); S3 answers its ETag, which completion needs. */
  async presignPart(key: string, uploadId: string, partNumber: number, expiresAt: Date): Promise<string> {
    const cmd = new UploadPartCommand({
      Bucket: this.o.bucket,
      Key: this.o.objectKey(key),
      UploadId: uploadId,
      PartNumber: partNumber,
    });
    return getSignedUrl(this.o.client, cmd, { expiresIn: seconds(expiresAt) });
  }

  /** Makes the object of the parts; an object stored meanwhile is kept (ObjectExistsError where S3 enforces it). */
  async completeMultipart(
    key: string,
    uploadId: string,
    parts: readonly { partNumber: number; etag: string }[],
  ): Promise<void> {
    try {
      await this.o.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.o.bucket,
          Key: this.o.objectKey(key),
          UploadId: uploadId,
          IfNoneMatch: '*',
          MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
        }),
      );
    } catch (err) {
      if (httpStatus(err) === 412) throw new ObjectExistsError(key);
      throw err;
    }
  }

  /** Drops the parts of an upload that will not be completed. */
  async abortMultipart(key: string, uploadId: string): Promise<void> {
    await this.o.client.send(
      new AbortMultipartUploadCommand({ Bucket: this.o.bucket, Key: this.o.objectKey(key), UploadId: uploadId }),
    );
  }
}
