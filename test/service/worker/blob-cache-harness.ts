// What the blob cache's tests share: a scratch folder per test, a cache in it, and a job's project
// assembled through that cache from object storage.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { assembleBlobProject } from '../../../service/worker/project/assemble-blobs.js';
import { BlobCache, type BlobSource } from '../../../service/worker/project/blob-cache.js';
import type { CountedStorage } from './blob-store.js';

export const WS = 'ws-blob-test';
export const KiB = 1024;

let base: string;

/** Gives each test of the calling file a fresh folder for its cache and its jobs' work. */
export function useScratch(): void {
  beforeEach(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'rb-blob-cache-'));
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });
}

/** The current test's folder. */
export function scratch(): string {
  return base;
}

export function newCache(maxBytes = 1024 ** 3, dir = path.join(base, 'blob-cache')): BlobCache {
  return new BlobCache({ dir, maxBytes });
}

export function assemble(
  s: CountedStorage | { storage: BlobSource },
  cache: BlobCache,
  projectKey: string,
  job: string,
  limits = {},
) {
  return assembleBlobProject({
    storage: s.storage,
    projectKey,
    workspaceId: WS,
    jobDir: path.join(base, 'work', job),
    cache,
    signal: new AbortController().signal,
    limits,
  });
}

/** Every file under the cache folder (blobs and anything else), relative. */
export async function cacheFiles(cache: BlobCache): Promise<string[]> {
  const all = await readdir(cache.dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return all
    .filter((e) => e.isFile())
    .map((e) => path.relative(cache.dir, path.join(e.parentPath, e.name)))
    .sort();
}

/** A texture's bytes, different for each n. */
export const texture = (n: number, size = 64 * KiB) => Buffer.concat([Buffer.from(`texture ${n} `), randomBytes(size)]);
