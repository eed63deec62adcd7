// The blob cache on one machine's real disks: kept under its cap by removing the least recently used
// blobs, shared safely by several worker processes, and stopped cleanly by a cancel. Projects built
// from each kind of object storage are in blob-project.test.ts.
import { mkdtemp, readdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlobRef } from '../../../shared/api/blob-upload.js';
import { assembleBlobProject } from '../../../service/worker/project/assemble-blobs.js';
import { BlobCache, type BlobSource } from '../../../service/worker/project/blob-cache.js';
import { asTaskOutcome, CanceledTaskError } from '../../../service/worker/runtime/outcomes.js';
import { UnpackAbortedError } from '../../../zip/errors.js';
import { blobOf, counting, storeProject, STORAGES, type CountedStorage } from './blob-store.js';
import { assemble, cacheFiles, KiB, newCache, scratch, texture, useScratch, WS } from './blob-cache-harness.js';

useScratch();

describe('the blob cache on one machine', () => {
  let s: CountedStorage;
  beforeAll(async () => {
    s = counting(await STORAGES[0]!.open());
  });
  afterAll(async () => {
    await s.close();
  });

  it('keeps under its cap, removing the least recently used blobs and never the ones in use', async () => {
    const cache = newCache(350 * KiB);
    const tex = [0, 1, 2, 3].map((n) => texture(n, 100 * KiB));
    const project = async (job: string, ...pick: number[]) =>
      assemble(
        s,
        cache,
        await storeProject(
          s.storage,
          WS,
          pick.map((n) => ({ path: `t${n}.png`, data: tex[n]! })),
        ),
        job,
      );
    await project('j0', 0);
    await project('j1', 1);
    await project('j2', 2);
    // Blob 0 used again: now 1 is the least recently used.
    expect((await project('j3', 0)).blobCache.hits).toBe(1);
    const four = await project('j4', 3);
    const held = (b: Buffer) =>
      stat(cache.pathOf(blobOf(b))).then(
        () => true,
        () => false,
      );
    expect(await Promise.all(tex.map(held))).toEqual([true, false, true, true]);
    const sizes = await Promise.all(
      (await cacheFiles(cache)).map(async (f) => (await stat(path.join(cache.dir, f))).size),
    );
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(350 * KiB);
    // A removed blob is gone from the cache only: the project linked to it keeps its bytes.
    expect(await readFile(path.join(scratch(), 'work', 'j1', 'project', 't1.png'))).toEqual(tex[1]);
    expect(four.files).toEqual(['t3.png']);

    // One project bigger than the cap: assembled whole (its blobs are in use), trimmed after.
    const big = await project('j5', 0, 1, 2, 3);
    expect(big.files).toHaveLength(4);
    for (const n of [0, 1, 2, 3]) expect(await readFile(path.join(big.root, `t${n}.png`))).toEqual(tex[n]);
    expect((await cache.trim()).bytes).toBeLessThanOrEqual(350 * KiB * 0.9);
  });

  it('drops a cached blob written through a link, and fetches it again', async () => {
    const cache = newCache();
    const data = texture(20);
    const key = await storeProject(s.storage, WS, [{ path: 't.png', data }]);
    const r = await assemble(s, cache, key, 'j1');
    // The 0444 mode stops a Blender writing to its project file, unless it runs as root (which
    // ignores modes): then the write reaches the cached inode, and the changed modification time
    // gives it away.
    const root = process.getuid?.() === 0;
    const write = writeFile(path.join(r.root, 't.png'), Buffer.alloc(data.length, 1));
    if (root) await write;
    else await expect(write).rejects.toMatchObject({ code: 'EACCES' });
    const again = await assemble(s, cache, key, 'j2');
    expect(again.blobCache).toEqual(
      root ? { hits: 0, misses: 1, bytesFetched: data.length } : { hits: 1, misses: 0, bytesFetched: 0 },
    );
    expect(await readFile(cache.pathOf(blobOf(data)))).toEqual(data);
    expect(await readFile(path.join(again.root, 't.png'))).toEqual(data);
  });

  it('fetches again a blob another worker process evicted between the lookup and the link', async () => {
    const data = texture(30);
    const key = await storeProject(s.storage, WS, [{ path: 't.png', data }]);
    const dir = path.join(scratch(), 'shared-cache');
    await assemble(s, newCache(undefined, dir), key, 'j1');
    // A second process's cache on the same folder, whose neighbour evicts the blob right after this one looked it up.
    const other = new (class extends BlobCache {
      override async lookup(blobs: readonly BlobRef[]) {
        const found = await super.lookup(blobs);
        await unlink(this.pathOf(blobOf(data)));
        return found;
      }
    })({ dir, maxBytes: 1024 ** 3 });
    s.gets.length = 0;
    const r = await assemble(s, other, key, 'j2');
    expect(r.blobCache).toEqual({ hits: 1, misses: 0, bytesFetched: data.length });
    expect(s.blobGets()).toHaveLength(1);
    expect(await readFile(path.join(r.root, 't.png'))).toEqual(data);
  });

  it('lets two worker processes download the same blob at once (the second link finds the first)', async () => {
    const data = texture(40, 1024 * KiB);
    const key = await storeProject(s.storage, WS, [{ path: 't.png', data }]);
    const dir = path.join(scratch(), 'shared-cache');
    const [a, b] = await Promise.all([
      assemble(s, newCache(undefined, dir), key, 'j1'),
      assemble(s, newCache(undefined, dir), key, 'j2'),
    ]);
    for (const r of [a, b]) expect(await readFile(path.join(r.root, 't.png'))).toEqual(data);
    expect((await readdir(path.join(dir, blobOf(data).sha256.slice(0, 2)))).filter((f) => f.endsWith('.part'))).toEqual(
      [],
    );
  });

  it('stops when its task is canceled mid-download, leaving no project and nothing half-cached', async () => {
    const data = texture(60, 2048 * KiB);
    const key = await storeProject(s.storage, WS, [
      { path: 'scene.blend', data: 'BLENDER' },
      { path: 't.png', data },
    ]);
    const cache = newCache();
    const canceled = new AbortController();
    // The cancellation arrives as the first blob's bytes start to flow.
    const storage: BlobSource = {
      get: async (k: string) => {
        const stream = await s.storage.get(k);
        if (k.startsWith('blobs/')) stream.once('data', () => canceled.abort(new Error('job canceled')));
        return stream;
      },
    };
    const jobDir = path.join(scratch(), 'work', 'j1');
    const err = await assembleBlobProject({
      storage,
      projectKey: key,
      workspaceId: WS,
      jobDir,
      cache,
      signal: canceled.signal,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnpackAbortedError);
    expect(asTaskOutcome(err)).toBeInstanceOf(CanceledTaskError);
    expect(await readdir(jobDir)).toEqual([]);
    expect((await cacheFiles(cache)).filter((f) => f.endsWith('.part'))).toEqual([]);
  });

  it('copies from a cache on another disk (no hard links across filesystems)', async (ctx) => {
    const shm = await mkdtemp('/dev/shm/rb-blob-cache-').catch(() => undefined);
    if (!shm || (await stat(shm)).dev === (await stat(scratch())).dev) {
      if (process.env.CI === 'true') throw new Error(`/dev/shm is needed on another filesystem than ${scratch()}`);
      console.warn(`skipped: /dev/shm is not another filesystem than ${scratch()}, so the cache could hard-link`);
      ctx.skip();
      return;
    }
    try {
      const data = texture(50);
      const cache = newCache(undefined, shm);
      const r = await assemble(s, cache, await storeProject(s.storage, WS, [{ path: 'sub/t.png', data }]), 'j1');
      const copy = await stat(path.join(r.root, 'sub', 't.png'));
      expect(copy.ino).not.toBe((await stat(cache.pathOf(blobOf(data)))).ino);
      expect(copy.mode & 0o777).toBe(0o644);
      expect(await readFile(path.join(r.root, 'sub', 't.png'))).toEqual(data);
    } finally {
      await rm(shm, { recursive: true, force: true });
    }
  });
});
