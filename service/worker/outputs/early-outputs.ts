// Output files stored while the job still renders. A warm slot puts each finished frame's files
// under the key finalize would give them (putFile: on a local store on the work folder's disk a
// hard link rather than a copy) and notes the local file it stored (size, mtime, inode) in the
// job folder; finalize then reuses every object whose file is still that file and stores only the
// rest, so what follows the last frame is the zip, not a put per frame. They are stored without a
// sync: a sync per frame is a journal commit that stalls Blender's own saves of the next frames.
// Instead the objects stored meanwhile are persisted in one batch every few seconds, in the
// background (a power loss mid-render finds at most those seconds' frames unwritten), and finalize
// persists the reused ones before it publishes them. Nothing is published before finalize records the outputs; a job
// that stops (canceled, failed) has these objects deleted with its folder, its finished frames kept apart
// for a requeue (kept-frames.ts). One machine only: with
// frames staged for other machines, finalize stores everything itself.
import { open, readFile, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { SavedPath } from '../../../blender/render/render-invocation.js';
import { safeSegment } from '../../../shared/safe-segment.js';
import { ObjectExistsError, type ObjectStorage } from '../../ports/storage.js';
import { placeOf, type OutputLayout } from './chunk-files.js';
import { relativeKey } from '../../domain/output-keys.js';

/** The note of stored files in the job folder, one JSON line per object. */
export const EARLY_OUTPUTS_FILE = 'early-outputs.jsonl';

/** One stored object and the local file it was stored from. */
export interface EarlyObject {
  key: string;
  /** Absolute path of the file in `out/`. */
  file: string;
  size: number;
  mtimeMs: number;
  ino: number;
}

/** The key finalize gives a frame file when no other file of the job takes it first. */
export function frameOutputKey(prefix: string, fileName: string): string {
  return `${prefix}/frames/${safeSegment(fileName)}`;
}

/** The key finalize gives a compositor file (relative to out/composite) when no other takes it first. */
export function compositeOutputKey(prefix: string, relativePath: string): string {
  return `${prefix}/composites/${relativeKey(relativePath)}`;
}

/** How long an early object may stay unsynced. */
const PERSIST_EVERY_MS = 5000;

export interface EarlyOutputsOptions {
  /** Objects stored are persisted in a batch once this long has passed since the last batch. Default 5000 ms. */
  persistEveryMs?: number;
}

/** Stores the files of finished frames as they come (see the header). */
export class EarlyOutputs {
  /** The note file, kept open: a line per stored object, a write per frame. */
  private notes: Promise<FileHandle> | undefined;
  /** Stored since the last batch was persisted. */
  private unsynced: string[] = [];
  private lastPersist = Date.now();
  private readonly persistEveryMs: number;
  /** The batches, one after the other; a failed one is left to finalize, which persists every object it reuses. */
  private persisting: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: ObjectStorage,
    /** The job's output prefix (jobOutputPrefix). */
    private readonly prefix: string,
    private readonly jobDir: string,
    opts: EarlyOutputsOptions = {},
  ) {
    this.persistEveryMs = opts.persistEveryMs ?? PERSIST_EVERY_MS;
  }

  /**
   * Puts the files just moved into `out/` and notes them; an object already there (a
   * retried frame) is left to finalize.
   */
  async store(out: OutputLayout, moved: readonly SavedPath[]): Promise<void> {
    const lines: string[] = [];
    for (const f of moved) {
      const file = placeOf(out, f);
      const key =
        f.kind === 'camera'
          ? frameOutputKey(this.prefix, path.posix.basename(f.relativePath))
          : compositeOutputKey(this.prefix, f.relativePath);
      // Noted as it was before it was stored: a file moved over it since (a frame rendered again) has
      // another inode, so finalize stores that one instead of reusing this object.
      const before = await stat(file);
      try {
        await this.storage.putFile(key, file, { sync: false });
      } catch (err) {
        if (err instanceof ObjectExistsError) continue;
        throw err;
      }
      const note: EarlyObject = { key, file, size: before.size, mtimeMs: before.mtimeMs, ino: before.ino };
      lines.push(JSON.stringify(note));
      this.unsynced.push(key);
    }
    if (lines.length === 0) return;
    if (Date.now() - this.lastPersist >= this.persistEveryMs) {
      const keys = this.unsynced;
      this.unsynced = [];
      this.lastPersist = Date.now();
      this.persisting = this.persisting.then(() => this.storage.persist(keys)).catch(() => undefined);
    }
    this.notes ??= open(path.join(this.jobDir, EARLY_OUTPUTS_FILE), 'a');
    await (await this.notes).write(`${lines.join('\n')}\n`);
  }

  /** Settles once the batches started so far are persisted (or failed: finalize persists again). */
  persisted(): Promise<void> {
    return this.persisting;
  }

  /** Closes the note file (the job ended here, or its last task here is long gone). */
  close(): void {
    void this.notes?.then((fh) => fh.close()).catch(() => undefined);
    this.notes = undefined;
  }
}

/**
 * The noted objects whose file is unchanged (same size, mtime and inode), by file. A file that
 * was rendered again since (a retry moved a new one in) is not among them.
 */
export async function unchangedEarlyOutputs(jobDir: string): Promise<Map<string, EarlyObject>> {
  const text = await readFile(path.join(jobDir, EARLY_OUTPUTS_FILE), 'utf8').catch(() => '');
  const byFile = new Map<string, EarlyObject>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const o = JSON.parse(line) as EarlyObject;
      byFile.set(o.file, o);
    } catch {
      // a line cut short by a crash: that object is stored again
    }
  }
  for (const [file, o] of byFile) {
    const now = await stat(file).catch(() => undefined);
    if (!now || now.size !== o.size || now.mtimeMs !== o.mtimeMs || now.ino !== o.ino) byFile.delete(file);
  }
  return byFile;
}
