import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { addAbortSignal, Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { create as contentDisposition } from 'content-disposition';
import { CONTENT_TYPES, type FileType } from '../../../shared/api/upload.js';
import type { S3Settings } from '../../config.js';
import {
  ObjectExistsError,
  ObjectTooLargeError,
  type ObjectStorage,
  type PutFileOptions,
  type PutOptions,
  type StoredObject,
} from '../../ports/storage.js';
import { isValidKey } from '../fs-storage/fs-storage.js';
import { contentTypeOf } from './content-type.js';
import { createS3Client, httpStatus, type S3ClientOptions } from './s3-client.js';
import { S3WorkerSigner } from './worker-signer.js';

export interface S3StorageOptions {
  client: S3Client;
  bucket: string;
  /**
   * Key prefix inside the bucket (`a/b` and `a/b/` both mean keys under `a/b/`), so deployments
   * can share a bucket. Default none.
   */
  prefix?: string;
  /**
   * Bytes per multipart part: S3 needs at least 5 MiB and allows 10,000 parts (8 MiB:
   * objects up to 78 GiB). Default 8 MiB.
   */
  partSizeBytes?: number;
  /** Parts in flight at once per put(); memory is about (queueSize + 1) × partSizeBytes per put. Default 4. */
  queueSize?: number;
  /** Keys per ListObjectsV2 page, and so per DeleteObjects batch (S3 allows at most 1000 for both). Default 1000. */
  listPageSize?: number;
  /** The clock presigned URLs are signed by, epoch ms. Default Date.now (tests sign in the past). */
  now?: () => number;
}

/**
 * SigV4 presigned URLs live at most 7 days. Longer lifetimes are clamped, so such a URL stops
 * working before the `expiresAt` the API reports (with temporary credentials, e.g. an instance
 * role, it also stops when the session does).
 */
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;
/** ListObjectsV2 pages and DeleteObjects batches hold at most 1000 keys. */
const MAX_KEYS = 1000;

function presignSeconds(expiresAt: Date, now: number): number {
  const s = Math.ceil((expiresAt.getTime() - now) / 1000);
  return Math.min(MAX_PRESIGN_SECONDS, Math.max(1, s));
}

/**
 * Object storage on S3 or an S3-compatible server. Clients upload and download with presigned
 * URLs straight to the bucket; the service only sees opaque URLs.
 */
export class S3ObjectStorage implements ObjectStorage {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly pageSize: number;
  private readonly now: () => number;

  constructor(opts: S3StorageOptions) {
    this.client = opts.client;
    this.bucket = opts.bucket;
    const p = (opts.prefix ?? '').replace(/^\/+|\/+$/g, '');
    this.prefix = p ? `${p}/` : '';
    this.partSize = opts.partSizeBytes ?? 8 * 1024 * 1024;
    this.queueSize = opts.queueSize ?? 4;
    this.pageSize = Math.min(MAX_KEYS, opts.listPageSize ?? MAX_KEYS);
    this.now = opts.now ?? Date.now;
  }

  /** When a URL signed now is signed, and for how many seconds, to last until `expiresAt`. */
  private signing(expiresAt: Date): { signingDate: Date; expiresIn: number } {
    const now = this.now();
    return { signingDate: new Date(now), expiresIn: presignSeconds(expiresAt, now) };
  }

  static fromSettings(
    s: S3Settings,
    opts: S3ClientOptions & Pick<S3StorageOptions, 'partSizeBytes' | 'queueSize' | 'listPageSize'> = {},
  ): S3ObjectStorage {
    const { credentials, ...rest } = opts;
    const client = createS3Client(s, credentials ? { credentials } : {});
    return new S3ObjectStorage({ client, bucket: s.bucket, prefix: s.prefix, ...rest });
  }

  /** Closes the client's connections. Only for storage made by fromSettings (it owns its client). */
  close(): void {
    this.client.destroy();
  }

  private objectKey(key: string): string {
    // The same keys as the filesystem storage, so both adapters accept and refuse alike.
    if (!isValidKey(key)) throw new Error(`invalid object key: ${key}`);
    return this.prefix + key;
  }

  async presignPut(key: string, opts: { expiresAt: Date; fileType: FileType }): Promise<string> {
    // Content-Type becomes a signed header: the PUT must carry exactly the type clients are told
    // to send (CONTENT_TYPES[...][0]: application/octet-stream for .blend, application/zip for .zip).
    const cmd = new PutObjectCommand({
      Bucket: this.bucket,
      Key: this.objectKey(key),
      ContentType: CONTENT_TYPES[opts.fileType][0],
    });
    // The presigner leaves content-type unsigned unless told otherwise.
    return getSignedUrl(this.client, cmd, {
      ...this.signing(opts.expiresAt),
      signableHeaders: new Set(['content-type']),
    });
  }

  async presignGet(key: string, opts: { expiresAt: Date; fileName: string }): Promise<string> {
    const cmd = new GetObjectCommand({
      Bucket: this.bucket,
      Key: this.objectKey(key),
      // `attachment; filename="ascii fallback"; filename*=UTF-8''...`, as the filesystem route sends.
      ResponseContentDisposition: contentDisposition(opts.fileName.split(/[/\\]/).pop() ?? 'download'),
      ResponseContentType: contentTypeOf(opts.fileName),
      ResponseCacheControl: 'private, no-store',
    });
    return getSignedUrl(this.client, cmd, this.signing(opts.expiresAt));
  }

  /** What the worker API's storage routes sign and run for workers without bucket keys. */
  workerSigner(): S3WorkerSigner {
    return new S3WorkerSigner({ client: this.client, bucket: this.bucket, objectKey: (key) => this.objectKey(key) });
  }

  async put(key: string, body: Readable, opts: PutOptions = {}): Promise<{ size: number; sha256: string }> {
    const Key = this.objectKey(key);
    // Servers without conditional writes (s3rver, older MinIO) ignore If-None-Match below, so look
    // first. Two puts of one key racing between this check and their completion can then both
    // succeed (the last one wins); on AWS S3 and current MinIO the conditional write closes that race.
    if (await this.stat(key)) {
      body.destroy();
      throw new ObjectExistsError(key);
    }
    const maxBytes = opts.maxBytes ?? Number.POSITIVE_INFINITY;
    const hash = createHash('sha256');
    let size = 0;
    async function* measured(): AsyncGenerator<Buffer> {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) throw new ObjectTooLargeError(maxBytes);
        hash.update(chunk);
        yield chunk;
      }
    }
    const upload = new Upload({
      client: this.client,
      // Parts are buffered (partSize each, queueSize in flight), never the whole object. Objects
      // smaller than one part go up as a single PutObject.
      params: { Bucket: this.bucket, Key, Body: Readable.from(measured()), IfNoneMatch: '*' },
      partSize: this.partSize,
      queueSize: this.queueSize,
      // We abort ourselves: lib-storage's own abort lets an abort failure hide the real error.
      leavePartsOnError: true,
    });
    try {
      await upload.done();
    } catch (err) {
      await this.abortMultipart(Key, upload.uploadId, err);
      if (httpStatus(err) === 412) throw new ObjectExistsError(key);
      throw err;
    } finally {
      body.destroy();
    }
    return { size, sha256: hash.digest('hex') };
  }

  async putFile(key: string, file: string, opts: PutFileOptions = {}): Promise<{ size: number }> {
    opts.signal?.throwIfAborted();
    // Opened first: a missing file fails here, before any request.
    const body = (await open(file, 'r')).createReadStream();
    return { size: (await this.put(key, opts.signal ? addAbortSignal(opts.signal, body) : body)).size };
  }

  /** S3 answers a PUT once the object is stored durably: nothing is left to sync. */
  async persist(): Promise<void> {}

  /**
   * Drops the parts of a failed multipart upload. An unfinished multipart upload is never a
   * visible object; if the abort itself fails (s3rver does not implement it) its parts stay
   * until the bucket's AbortIncompleteMultipartUpload lifecycle rule removes them.
   */
  private async abortMultipart(Key: string, uploadId: string | undefined, cause: unknown): Promise<void> {
    if (!uploadId) return;
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId: uploadId }));
    } catch (abortErr) {
      if (cause instanceof Error && cause.cause === undefined) cause.cause = abortErr;
    }
  }

  async get(key: string): Promise<Readable> {
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      // In Node the SDK's body is an http.IncomingMessage, a Readable.
      return r.Body as Readable;
    } catch (err) {
      if (httpStatus(err) === 404) throw new Error(`object ${key} not found in bucket ${this.bucket}`, { cause: err });
      throw err;
    }
  }

  async stat(key: string): Promise<StoredObject | undefined> {
    try {
      const r = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return { size: r.ContentLength ?? 0 };
    } catch (err) {
      const status = httpStatus(err);
      if (status === 404) return undefined;
      if (status === 403) {
        throw new Error(
          `access denied reading object ${key} in bucket ${this.bucket}: grant s3:GetObject and s3:ListBucket ` +
            '(without ListBucket, S3 answers 403 instead of 404 for a missing object)',
          { cause: err },
        );
      }
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  /** Deletes `prefix` and everything under `prefix/`, like removing a folder (`jobs/1` spares `jobs/10`). */
  async deletePrefix(prefix: string): Promise<void> {
    const base = prefix.replace(/\/+$/, '');
    await this.delete(base);
    for await (const page of this.pages(base)) {
      for (let i = 0; i < page.length; i += MAX_KEYS) {
        const Objects = page.slice(i, i + MAX_KEYS).map((o) => ({ Key: o.Key }));
        const r = await this.client.send(
          new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects, Quiet: true } }),
        );
        const failed = r.Errors ?? [];
        if (failed.length > 0) {
          const first = failed[0]!;
          throw new Error(
            `could not delete ${failed.length} object(s) under ${prefix} in bucket ${this.bucket} (first: ` +
              `${first.Key ?? '?'}: ${first.Code ?? 'error'} ${first.Message ?? ''}); check s3:DeleteObject ` +
              'permission and retry',
          );
        }
      }
    }
  }

  async list(prefix: string): Promise<{ key: string; size: number }[]> {
    const out: { key: string; size: number }[] = [];
    for await (const page of this.pages(prefix.replace(/\/+$/, ''))) {
      for (const o of page) out.push({ key: o.Key.slice(this.prefix.length), size: o.Size });
    }
    // S3 lists in UTF-8 byte order; keys are ASCII (isValidKey), where that is also string order.
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** The objects under the folder `base/`, one ListObjectsV2 page at a time. */
  private async *pages(base: string): AsyncGenerator<{ Key: string; Size: number }[]> {
    const folder = `${this.objectKey(base)}/`;
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: folder,
          ContinuationToken: token,
          MaxKeys: this.pageSize,
        }),
      );
      yield (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key, Size: o.Size ?? 0 }] : []));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}
