// Where blob part bytes go: a blob of one part straight to its key through the verifier; parts
// of a larger blob to their own keys, and once all are in, through the verifier into the blob's
// key. A blob's key only ever receives verified bytes, so an object found there is the blob.
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobRef } from '../../shared/api/blob-upload.js';
import { blobKey, blobPartKey, blobPartsPrefix } from '../domain/blob-project.js';
import type { BlobIndex } from '../ports/blobs.js';
import { ObjectExistsError, type ObjectStorage } from '../ports/storage.js';
import type { PartAddress } from './part-urls.js';
import { partCount, partExtent } from './part-layout.js';
import { exactLength, HashMismatchError, LengthMismatchError, verifiedBlob } from './verify-stream.js';

/** The blob is being deleted by the collector right now: the client should query again shortly. */
export class BlobBusyError extends Error {
  constructor() {
    super('blob is being collected');
  }
}

export interface ReceiverDeps {
  index: Pick<BlobIndex, 'touchHeld' | 'record' | 'forget' | 'noteParts' | 'partsDone'>;
  storage: ObjectStorage;
  /** Clock for index times. Default Date.now. */
  now?: () => number;
}

/** A refusal of the bytes themselves (as opposed to a storage or connection failure). */
function isRefusal(err: unknown): boolean {
  return err instanceof LengthMismatchError || err instanceof HashMismatchError;
}

/**
 * Streams `body` through `check` into `storage.put(key)`. A refusing check fails the put (nothing
 * stored) and is the error thrown; a failing put stops the stream (and is the error thrown).
 * ObjectExistsError: the key holds an object already, left alone.
 */
async function putThrough(
  storage: ObjectStorage,
  key: string,
  body: Readable,
  check: NodeJS.ReadWriteStream,
): Promise<void> {
  const out = new PassThrough();
  const piped = pipeline([body, check, out]);
  // A put that fails before reading everything (no space, the key exists) must stop the stream too.
  const stored = storage.put(key, out).catch((err: unknown) => {
    out.destroy(err as Error);
    throw err;
  });
  const [p, s] = await Promise.allSettled([piped, stored]);
  if (p.status === 'rejected' && isRefusal(p.reason)) throw p.reason;
  if (s.status === 'rejected') throw s.reason;
  if (p.status === 'rejected') throw p.reason;
}

export class BlobReceiver {
  /** Assemblies running in this process, by blob key: a second completion waits for the first. */
  private readonly assembling = new Map<string, Promise<void>>();
  private readonly now: () => number;

  constructor(private readonly deps: ReceiverDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Whether the workspace holds the blob already (touching it). */
  async held(workspaceId: string, blob: BlobRef): Promise<boolean> {
    return (await this.deps.index.touchHeld(workspaceId, [blob], this.now())).length > 0;
  }

  /**
   * Stores one part's raw bytes (`body` already decoded). Returns whether the blob is now
   * complete. Throws LengthMismatchError, HashMismatchError (the blob's parts are then dropped:
   * they must all be sent again) or BlobBusyError.
   */
  async receive(a: PartAddress, body: Readable): Promise<boolean> {
    const { workspaceId, blob, partSize } = a;
    const extent = partExtent(blob, partSize, a.partNumber)!;
    // Sent again after it was complete (a retry whose answer was lost): nothing to store.
    if (await this.held(workspaceId, blob)) return true;
    if (partCount(blob.size, partSize) === 1) {
      await this.storeOnce(blobKey(workspaceId, blob), body, verifiedBlob(blob));
      await this.settle(workspaceId, blob);
      return true;
    }
    // Noted before the part is written: any stored part has a row the collector can find.
    await this.deps.index.noteParts(workspaceId, blob, partSize, this.now());
    const key = blobPartKey(workspaceId, blob, partSize, a.partNumber);
    // A retried part replaces the one sent before (which may be what failed verification).
    if (await this.deps.storage.stat(key)) await this.deps.storage.delete(key);
    await this.storeOnce(key, body, exactLength(extent.length));
    if (!(await this.allPartsIn(workspaceId, blob, partSize))) return false;
    const bKey = blobKey(workspaceId, blob);
    let running = this.assembling.get(bKey);
    if (!running) {
      running = this.assemble(workspaceId, blob, partSize).finally(() => this.assembling.delete(bKey));
      this.assembling.set(bKey, running);
    }
    await running;
    return true;
  }

  /** Stores through `check`; an object another request stored meanwhile is as good (same key, same checks). */
  private async storeOnce(key: string, body: Readable, check: NodeJS.ReadWriteStream): Promise<void> {
    try {
      await putThrough(this.deps.storage, key, body, check);
    } catch (err) {
      if (!(err instanceof ObjectExistsError)) throw err;
    }
  }

  /** Which parts are stored, with their exact lengths (the resume answer of a query). */
  async storedParts(workspaceId: string, blob: BlobRef, partSize: number): Promise<Set<number>> {
    const prefix = blobPartsPrefix(workspaceId, blob, partSize);
    const stored = new Set<number>();
    for (const o of await this.deps.storage.list(prefix)) {
      const n = Number(o.key.slice(prefix.length));
      if (partExtent(blob, partSize, n)?.length === o.size) stored.add(n);
    }
    return stored;
  }

  private async allPartsIn(workspaceId: string, blob: BlobRef, partSize: number): Promise<boolean> {
    return (await this.storedParts(workspaceId, blob, partSize)).size === partCount(blob.size, partSize);
  }

  /** Streams the parts in order through the verifier into the blob's key, then drops them. */
  private async assemble(workspaceId: string, blob: BlobRef, partSize: number): Promise<void> {
    const { storage } = this.deps;
    const key = blobKey(workspaceId, blob);
    const prefix = blobPartsPrefix(workspaceId, blob, partSize);
    const dropParts = async () => {
      await storage.deletePrefix(prefix);
      await this.deps.index.partsDone(workspaceId, blob, partSize);
    };
    if (!(await storage.stat(key))) {
      async function* parts(): AsyncGenerator<Buffer> {
        for (let n = 1; n <= partCount(blob.size, partSize); n++) {
          for await (const chunk of await storage.get(blobPartKey(workspaceId, blob, partSize, n)))
            yield chunk as Buffer;
        }
      }
      try {
        await this.storeOnce(key, Readable.from(parts()), verifiedBlob(blob));
      } catch (err) {
        // Another instance completing the same blob may have assembled it and dropped the parts.
        if (await storage.stat(key)) return this.finishAssembled(workspaceId, blob, dropParts);
        // Wrong bytes: no part can be trusted over another, so all go (the client sends them
        // again). Any other failure (storage, network) keeps them for a retry of the last part.
        if (isRefusal(err)) await dropParts();
        throw err;
      }
    }
    await this.finishAssembled(workspaceId, blob, dropParts);
  }

  private async finishAssembled(workspaceId: string, blob: BlobRef, dropParts: () => Promise<void>): Promise<void> {
    await dropParts();
    await this.settle(workspaceId, blob);
  }

  /**
   * Records a blob whose object is stored. The object is looked at again after the record: if
   * the collector deleted it between the put and the record, the row goes and the client retries.
   */
  async settle(workspaceId: string, blob: BlobRef): Promise<void> {
    if (!(await this.deps.index.record(workspaceId, blob, this.now()))) throw new BlobBusyError();
    if (!(await this.deps.storage.stat(blobKey(workspaceId, blob)))) {
      await this.deps.index.forget(workspaceId, blob);
      throw new BlobBusyError();
    }
  }
}
