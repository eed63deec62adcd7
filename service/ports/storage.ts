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

export interface PutFileOptions {
  /**
   * Wait until the file's bytes are on disk before the object exists (local stores). Default true;
   * with false, `persist` before the object is published.
   */
  sync?: boolean;
  /** Aborting stops a copy still under way; nothing is stored then. Default none. */
  signal?: AbortSignal;
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
  /**
   * Stores the local file `file`, which is complete and never written again (it may still be
   * renamed or deleted: the object keeps its bytes). A local store on the same disk makes the
   * object a second name of the file (a hard link: no copy, a rendered frame costs one sync and
   * one link); any other store copies it as `put` does. Never overwrites (ObjectExistsError).
   */
  putFile(key: string, file: string, opts?: PutFileOptions): Promise<{ size: number }>;
  /**
   * Resolves once the objects, stored earlier with `sync: false`, are on disk: a local store syncs
   * their files (a batch at once, so the disk commits them together instead of once per object);
   * a remote store holds them durably already. Keys without an object are passed over.
   */
  persist(keys: readonly string[]): Promise<void>;
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
