// Blob projects for the worker's tests, written straight into real object storage (the
// filesystem adapter, or S3 on s3rver) as the service's commit leaves them: each blob at its
// blobKey, the project document at the upload's key. The storage is wrapped to count GETs.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { BlobRef } from '../../../shared/api/blob-upload.js';
import { FsObjectStorage } from '../../../service/adapters/fs-storage/fs-storage.js';
import { UrlSigner } from '../../../service/adapters/fs-storage/url-signer.js';
import { S3ObjectStorage } from '../../../service/adapters/s3/s3-storage.js';
import { BLOB_PROJECT_OBJECT, blobKey } from '../../../service/domain/blob-project.js';
import { uploadKey } from '../../../service/domain/jobs.js';
import type { ObjectStorage } from '../../../service/ports/storage.js';
import { startS3 } from '../../helpers/s3.js';

export interface CountedStorage {
  storage: ObjectStorage;
  /** Keys read with get, in order. */
  gets: string[];
  /** Keys of blobs read (the project documents left out). */
  blobGets(): string[];
  close(): Promise<void>;
}

/** The two stores a worker reads blobs from: this machine's files, and S3. */
export const STORAGES: {
  name: string;
  open(): Promise<ObjectStorage & { close?(): void; cleanup(): Promise<void> }>;
}[] = [
  {
    name: 'filesystem storage',
    async open() {
      const root = await mkdtemp(path.join(tmpdir(), 'rb-blob-fs-'));
      const fs = new FsObjectStorage(root, new UrlSigner(randomBytes(32)), () => 'http://127.0.0.1:1');
      await fs.init();
      return Object.assign(fs, { cleanup: () => rm(root, { recursive: true, force: true }) });
    },
  },
  {
    name: 'S3 (s3rver)',
    async open() {
      const s3 = await startS3();
      const storage = S3ObjectStorage.fromSettings(s3.settings, { credentials: s3.credentials });
      return Object.assign(storage, {
        cleanup: async () => {
          storage.close();
          await s3.close();
        },
      });
    },
  },
];

/** Wraps the real storage's get to record each key read. */
export function counting(storage: ObjectStorage & { cleanup(): Promise<void> }): CountedStorage {
  const gets: string[] = [];
  const wrapped = Object.create(storage) as ObjectStorage;
  wrapped.get = (key: string) => {
    gets.push(key);
    return storage.get(key);
  };
  return {
    storage: wrapped,
    gets,
    blobGets: () => gets.filter((k) => k.startsWith('blobs/')),
    close: () => storage.cleanup(),
  };
}

export function blobOf(data: Buffer | string): BlobRef {
  const bytes = Buffer.from(data);
  return { sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
}

/**
 * Stores each file's blob (empty ones are never stored, as the service does) and the project document; returns its key.
 */
export async function storeProject(
  storage: ObjectStorage,
  workspaceId: string,
  files: readonly { path: string; data: Buffer | string }[],
  slug = `up-${randomBytes(6).toString('hex')}`,
): Promise<string> {
  for (const f of files) {
    const b = blobOf(f.data);
    if (b.size > 0 && !(await storage.stat(blobKey(workspaceId, b))))
      await storage.put(blobKey(workspaceId, b), Readable.from([Buffer.from(f.data)]));
  }
  return storeDocument(
    storage,
    workspaceId,
    { version: 1, entries: files.map((f) => ({ path: f.path, ...blobOf(f.data) })) },
    slug,
  );
}

/** Stores a project document as given (hostile ones included); returns its key. */
export async function storeDocument(
  storage: ObjectStorage,
  workspaceId: string,
  doc: unknown,
  slug = `up-${randomBytes(6).toString('hex')}`,
): Promise<string> {
  const key = uploadKey(workspaceId, slug, BLOB_PROJECT_OBJECT);
  await storage.put(key, Readable.from([Buffer.from(JSON.stringify(doc))]));
  return key;
}
