// Object storage: uploaded projects and rendered outputs, with presigned URLs for clients.
import type { Readable } from 'node:stream';
import type { FileType } from '../../shared/api/upload.js';

export interface StoredObject {
  size: number;
}

export interface PutOptions {
  /** Most bytes accepted. Default unlimited. */
  maxBytes?: number;
  /** Wait until the bytes are on disk (local stores). Default true. */
  sync?: boolean;
}

export interface ObjectStorage {
  /** A URL accepting one PUT of the object until `expiresAt`. */
  presignPut(key: string, opts: { expiresAt: Date; fileType: FileType }): Promise<string>;
  /** A URL serving the object (with Range) until `expiresAt`, named `fileName` when saved. */
  presignGet(key: string, opts: { expiresAt: Date; fileName: string }): Promise<string>;
  /**
   * Streams into the object; it becomes visible only when complete. Throws ObjectTooLargeError past
   * maxBytes. `sync: false` (default true) lets a local store return before the bytes reach the
   * disk, for objects a machine crash may cut short (task logs); a remote store ignores it.
   */
  put(key: string, body: Readable, opts?: PutOptions): Promise<{ size: number; sha256: string }>;
  get(key: string): Promise<Readable>;
  stat(key: string): Promise<StoredObject | undefined>;
  delete(key: string): Promise<void>;
  deletePrefix(prefix: string): Promise<void>;
  /** Every object under `prefix` (a folder: `a/b/` or `a/b`), in key order. */
  list(prefix: string): Promise<{ key: string; size: number }[]>;
}

export class ObjectTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`object exceeds ${maxBytes} bytes`);
  }
}

export class ObjectExistsError extends Error {
  constructor(readonly key: string) {
    super(`object ${key} already exists`);
  }
}
