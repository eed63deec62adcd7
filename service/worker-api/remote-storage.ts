// Object storage of a worker on another machine that holds no bucket key: each call asks the
// service's worker API (storage-contract.ts, through storage-call.ts) for the job it works for, and
// the bytes go straight to S3 on the short-lived URL the service signed (signed-transfer.ts). The
// job is the running task's (job-scope.ts), else the one the key names (outputs, logs and staging
// keys carry it).
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import {
  ObjectExistsError,
  ObjectTooLargeError,
  type ObjectStorage,
  type PutFileOptions,
  type PutOptions,
  type StoredObject,
} from '../ports/storage.js';
import { WorkerApiClient, WorkerApiError, type WorkerApiClientOptions } from './client.js';
import { WORKER_API_PREFIX } from './contract.js';
import {
  InfoAnswer,
  ListAnswer,
  MAX_SINGLE_PUT_BYTES,
  MAX_WORKER_URL_SECONDS,
  SignedUrl,
  StartAnswer,
  StatAnswer,
  STORAGE_ROUTES,
} from './storage-contract.js';
import { askStorage, existsAs } from './storage-call.js';
import { transient, upload } from './signed-transfer.js';

export interface RemoteWorkerStorageOptions extends WorkerApiClientOptions {
  /** Folder where put() gathers a stream before its upload (S3 needs the length first). Required; made when missing. */
  spoolDir: string;
  /** Objects larger than this go up in parts (S3 takes at most 5 GiB in one PUT). Default 5 GiB. */
  multipartAboveBytes?: number;
  /**
   * Bytes per part, at least 5 MiB (S3's smallest but the last), raised so no upload needs over 10,000. Default 64 MiB.
   */
  partSizeBytes?: number;
}

/** S3's smallest part but the last, and its most parts per upload. */
const MIN_PART_BYTES = 5 * 1024 * 1024;
const MAX_PARTS = 10_000;

export class RemoteWorkerStorage implements ObjectStorage {
  private readonly api: WorkerApiClient;
  private readonly spoolDir: string;
  private readonly multipartAbove: number;
  private readonly partSize: number;

  constructor(opts: RemoteWorkerStorageOptions) {
    this.api = new WorkerApiClient(opts);
    this.spoolDir = opts.spoolDir;
    this.multipartAbove = Math.min(MAX_SINGLE_PUT_BYTES, opts.multipartAboveBytes ?? MAX_SINGLE_PUT_BYTES);
    this.partSize = Math.max(MIN_PART_BYTES, opts.partSizeBytes ?? 64 * 1024 * 1024);
  }

  /** Resolves when the service offers its storage to workers (on S3); else says what to change. */
  async ready(): Promise<void> {
    const path = `${WORKER_API_PREFIX}${STORAGE_ROUTES.info}`;
    const a = await this.api.call('GET', path);
    if (a.status === 200 && InfoAnswer.safeParse(a.body).success) return;
    if (a.status === 404) {
      throw new Error(
        `${a.url} offers workers no storage: the service keeps files in its own folder (or is older than this ` +
          'worker). Run the service on S3 (--s3-bucket) for workers without bucket keys, or give this worker the ' +
          'bucket (--s3-bucket and its credentials).',
      );
    }
    throw a.status >= 400
      ? this.api.refusal(a, 'GET', path)
      : new WorkerApiError(
          `${a.url} answered GET ${path} with ${a.status}: run the same renderbridge version on service and workers.`,
          a.status,
          null,
        );
  }

  /** Workers hand out no upload URLs: clients upload through the public API. */
  async presignPut(): Promise<string> {
    throw new Error("a remote worker signs no upload URLs: clients upload through the service's public API");
  }

  async presignGet(key: string, opts: { expiresAt: Date; fileName: string }): Promise<string> {
    const seconds = Math.min(
      MAX_WORKER_URL_SECONDS,
      Math.max(1, Math.ceil((opts.expiresAt.getTime() - Date.now()) / 1000)),
    );
    return (await this.sign('read', key, seconds)).url;
  }

  /** A URL for the key (its life in seconds: the service's default when not given). */
  async sign(kind: 'read' | 'write', key: string, expiresInSeconds?: number): Promise<SignedUrl> {
    return askStorage(
      this.api,
      STORAGE_ROUTES[kind],
      { key, ...(expiresInSeconds !== undefined ? { expiresInSeconds } : {}) },
      key,
      200,
      SignedUrl,
    );
  }

  async get(key: string): Promise<Readable> {
    // A fresh URL per try: S3's 500 and 503 (SlowDown) are worth another go, as the SDK's retries do in direct mode.
    const res = await transient(
      async () => {
        const { url, headers } = await this.sign('read', key);
        return fetch(url, { headers });
      },
      (r) => r.status >= 500,
    );
    if (!res.ok || !res.body) {
      const text = await res.text().catch(() => '');
      if (res.status === 404) throw new Error(`object ${key} not found in the service's storage`);
      throw new Error(`reading object ${key} from storage failed with HTTP ${res.status}: ${text.slice(0, 300)}`);
    }
    return Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
  }

  async put(key: string, body: Readable, opts: PutOptions = {}): Promise<{ size: number; sha256: string }> {
    // Refused before a byte is read, as other stores refuse it before storing.
    if (await this.stat(key)) {
      body.destroy();
      throw new ObjectExistsError(key);
    }
    await mkdir(this.spoolDir, { recursive: true });
    const spooled = path.join(this.spoolDir, `${randomUUID()}.part`);
    const hash = createHash('sha256');
    const maxBytes = opts.maxBytes ?? Number.POSITIVE_INFINITY;
    let size = 0;
    const measure = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        if (size > maxBytes) return cb(new ObjectTooLargeError(maxBytes));
        hash.update(chunk);
        cb(null, chunk);
      },
    });
    try {
      await pipeline(body, measure, createWriteStream(spooled, { flags: 'wx', mode: 0o600 }));
      await this.putFile(key, spooled);
      return { size, sha256: hash.digest('hex') };
    } finally {
      await rm(spooled, { force: true });
    }
  }

  async putFile(key: string, file: string, opts: PutFileOptions = {}): Promise<{ size: number }> {
    opts.signal?.throwIfAborted();
    // Opened first: a missing file fails here, before any request.
    const fh = await open(file, 'r');
    try {
      const { size } = await fh.stat();
      if (size > this.multipartAbove && size > 0) {
        await this.putParts(key, fh, size, opts.signal);
        return { size };
      }
      // A 5xx stored nothing: tried again (a lost answer is not, as the object may be stored).
      const { status } = await transient(
        async () => {
          const signed = await this.sign('write', key).catch(existsAs(key));
          opts.signal?.throwIfAborted();
          return upload(signed, fh.createReadStream({ start: 0, autoClose: false }), size, opts.signal);
        },
        (r) => r.status >= 500,
      );
      // 412: S3 honoured If-None-Match: someone stored the key between the service's look and this PUT.
      if (status === 412) throw new ObjectExistsError(key);
      if (status < 200 || status > 299) throw new Error(`storing object ${key} failed with HTTP ${status}`);
      return { size };
    } finally {
      await fh.close();
    }
  }

  /**
   * A multipart upload, each part on a URL asked for right before it goes; aborted (its parts dropped) on any failure.
   */
  private async putParts(key: string, fh: FileHandle, size: number, signal?: AbortSignal): Promise<void> {
    const partSize = Math.max(this.partSize, Math.ceil(size / MAX_PARTS));
    const { uploadId } = await askStorage(
      this.api,
      STORAGE_ROUTES.multipartStart,
      { key },
      key,
      200,
      StartAnswer,
    ).catch(existsAs(key));
    try {
      const parts: { partNumber: number; etag: string }[] = [];
      for (let partNumber = 1, offset = 0; offset < size; partNumber++, offset += partSize) {
        signal?.throwIfAborted();
        const length = Math.min(partSize, size - offset);
        // A part sent again replaces itself: any failure of one is worth another go.
        const { status, etag } = await transient(
          async () => {
            const signed = await askStorage(
              this.api,
              STORAGE_ROUTES.multipartPart,
              { key, uploadId, partNumber },
              key,
              200,
              SignedUrl,
            );
            return upload(
              signed,
              fh.createReadStream({ start: offset, end: offset + length - 1, autoClose: false }),
              length,
              signal,
            );
          },
          (r) => r.status >= 500,
          () => !signal?.aborted,
        );
        if (status < 200 || status > 299 || !etag)
          throw new Error(
            `storing part ${partNumber} of object ${key} failed with HTTP ${status}${etag ? '' : ' (no ETag)'}`,
          );
        parts.push({ partNumber, etag });
      }
      await askStorage(this.api, STORAGE_ROUTES.multipartComplete, { key, uploadId, parts }, key, 204).catch(
        existsAs(key),
      );
    } catch (err) {
      await askStorage(this.api, STORAGE_ROUTES.multipartAbort, { key, uploadId }, key, 204).catch(() => undefined);
      throw err;
    }
  }

  /** S3 answers a PUT once the object is stored durably: nothing is left to sync. */
  async persist(): Promise<void> {}

  async stat(key: string): Promise<StoredObject | undefined> {
    return (await askStorage(this.api, STORAGE_ROUTES.stat, { key }, key, 200, StatAnswer)).data ?? undefined;
  }

  async delete(key: string): Promise<void> {
    await askStorage(this.api, STORAGE_ROUTES.delete, { key }, key, 204);
  }

  async deletePrefix(prefix: string): Promise<void> {
    await askStorage(this.api, STORAGE_ROUTES.deletePrefix, { prefix }, prefix, 204);
  }

  async list(prefix: string): Promise<{ key: string; size: number }[]> {
    return (await askStorage(this.api, STORAGE_ROUTES.list, { prefix }, prefix, 200, ListAnswer)).data;
  }
}
