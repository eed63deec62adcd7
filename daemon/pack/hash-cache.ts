// Checksums of files already read, so packing a big project again reads only what changed. An
// entry counts only while the file keeps its absolute path, size, modification time (ns) and
// device + inode; a file written in place keeps its inode but gets a new mtime, and a file
// replaced by rename gets a new inode. Kept in one JSON file in the daemon's state folder,
// written atomically (temporary file + rename) and bounded (least recently used entries go).
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** File name of the cache in the state folder. */
export const HASH_CACHE_FILE = 'hash-cache.json';

/** What a cache lookup compares: a file whose stat differs in any of these is read again. */
export interface FileKey {
  /** Absolute path. */
  path: string;
  size: number;
  mtimeNs: bigint;
  /** `dev:ino`; a file without one (some network filesystems) is never cached. */
  identity: string | undefined;
}

/** What the cache keeps of a file read before. */
export interface CachedHash {
  sha256: string;
  /** Whether its bytes compress (compressibility.ts on its first bytes). */
  deflate: boolean;
}

export interface HashCacheStats {
  /** Lookups answered from the cache (the file was not read). */
  hits: number;
  /** Lookups that found nothing usable (the file was read). */
  misses: number;
  entries: number;
}

export interface HashCacheOptions {
  /** The JSON file; null keeps the cache in memory only. Default null. */
  file?: string | null;
  /** Most entries kept; beyond, the least recently used go. Default 200000 (about 30 MB of JSON). */
  maxEntries?: number;
}

type Row = [size: number, mtimeNs: string, identity: string, sha256: string, deflate: 0 | 1, usedAt: number];

interface CacheDocument {
  version: 1;
  entries: Record<string, Row>;
}

export class HashCache {
  private readonly file: string | null;
  private readonly maxEntries: number;
  private rows = new Map<string, Row>();
  private loaded: Promise<void> | undefined;
  private dirty = false;
  private saving: Promise<void> = Promise.resolve();
  private counters = { hits: 0, misses: 0 };

  constructor(options: HashCacheOptions = {}) {
    this.file = options.file ?? null;
    this.maxEntries = options.maxEntries ?? 200_000;
  }

  /** Reads the file once; a missing or unreadable one starts an empty cache (it only costs time). */
  load(): Promise<void> {
    this.loaded ??= (async () => {
      if (!this.file) return;
      const text = await readFile(this.file, 'utf8').catch(() => null);
      if (text === null) return;
      try {
        const doc = JSON.parse(text) as CacheDocument;
        if (doc.version !== 1 || typeof doc.entries !== 'object' || doc.entries === null) return;
        const rows = Object.entries(doc.entries).filter(([, r]) => Array.isArray(r) && r.length === 6);
        // Oldest first, so the Map's order is the eviction order.
        rows.sort((a, b) => a[1][5] - b[1][5]);
        this.rows = new Map(rows);
      } catch {
        this.rows = new Map();
      }
    })();
    return this.loaded;
  }

  /** The checksum of a file whose key matches what was stored, else undefined. Counts a hit or a miss. */
  get(key: FileKey): CachedHash | undefined {
    const row = this.rows.get(key.path);
    if (
      !row ||
      key.identity === undefined ||
      row[0] !== key.size ||
      row[1] !== String(key.mtimeNs) ||
      row[2] !== key.identity
    ) {
      this.counters.misses++;
      return undefined;
    }
    this.counters.hits++;
    row[5] = Date.now();
    this.rows.delete(key.path);
    this.rows.set(key.path, row);
    this.dirty = true;
    return { sha256: row[3], deflate: row[4] === 1 };
  }

  /** Remembers a file's checksum under its key (files without an identity are not kept). */
  set(key: FileKey, value: CachedHash): void {
    if (key.identity === undefined) return;
    this.rows.delete(key.path);
    this.rows.set(key.path, [
      key.size,
      String(key.mtimeNs),
      key.identity,
      value.sha256,
      value.deflate ? 1 : 0,
      Date.now(),
    ]);
    for (const oldest of this.rows.keys()) {
      if (this.rows.size <= this.maxEntries) break;
      this.rows.delete(oldest);
    }
    this.dirty = true;
  }

  stats(): HashCacheStats {
    return { ...this.counters, entries: this.rows.size };
  }

  /**
   * Writes the cache when it changed: a temporary file beside it, then a rename, so a reader (or a
   * crash) sees the old file or the new one, never half of one. Saves run one after another.
   */
  save(): Promise<void> {
    this.saving = this.saving
      .catch(() => undefined)
      .then(async () => {
        if (!this.file || !this.dirty) return;
        this.dirty = false;
        const doc: CacheDocument = { version: 1, entries: Object.fromEntries(this.rows) };
        await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
        const tmp = `${this.file}.${randomUUID()}.tmp`;
        try {
          await writeFile(tmp, JSON.stringify(doc), { mode: 0o600 });
          await rename(tmp, this.file);
        } catch (err) {
          this.dirty = true;
          await rm(tmp, { force: true });
          throw err;
        }
      });
    return this.saving;
  }
}
