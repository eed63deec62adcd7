// A worker builds a job's project from blobs through its local cache, on real object storage
// (files, and S3 on s3rver) and real disks: byte for byte, each blob downloaded once per machine
// however many jobs or slots want it, damaged blobs refused and never cached, and the cache kept
// under its cap by removing the least recently used blobs.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BlobRef } from '../../../shared/api/blob-upload.js';
import { PACK_MANIFEST_NAME } from '../../../shared/pack/manifest.js';
import { blobKey } from '../../../service/domain/blob-project.js';
import { assembleBlobProject } from '../../../service/worker/project/assemble-blobs.js';
import { BlobCache, type BlobSource } from '../../../service/worker/project/blob-cache.js';
import { BlobIntegrityError } from '../../../service/worker/project/blob-integrity.js';
import { asTaskOutcome, CanceledTaskError, RetryableTaskError } from '../../../service/worker/runtime/outcomes.js';
import { UnpackAbortedError } from '../../../zip/errors.js';
import { blobOf, counting, storeDocument, storeProject, STORAGES, type CountedStorage } from './blob-store.js';

const WS = 'ws-blob-test';
const KiB = 1024;

let base: string;
beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'rb-blob-cache-'));
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function newCache(maxBytes = 1024 ** 3, dir = path.join(base, 'blob-cache')): BlobCache {
  return new BlobCache({ dir, maxBytes });
}

function assemble(
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
async function cacheFiles(cache: BlobCache): Promise<string[]> {
  const all = await readdir(cache.dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return all
    .filter((e) => e.isFile())
    .map((e) => path.relative(cache.dir, path.join(e.parentPath, e.name)))
    .sort();
}

const texture = (n: number, size = 64 * KiB) => Buffer.concat([Buffer.from(`texture ${n} `), randomBytes(size)]);

describe.each(STORAGES)('blob projects on $name', (kind) => {
  let s: CountedStorage;
  beforeAll(async () => {
    s = counting(await kind.open());
  });
  afterAll(async () => {
    await s.close();
  });
  beforeEach(() => {
    s.gets.length = 0;
  });

  it('assembles the project byte for byte, its files hard links to read-only cached blobs', async () => {
    const wood = texture(1);
    const manifest = JSON.stringify({ version: 1, sceneFile: 'scenes/main.blend', createdBy: 'test' });
    const files = [
      { path: 'scenes/main.blend', data: Buffer.concat([Buffer.from('BLENDER-v304'), randomBytes(200 * KiB)]) },
      { path: 'textures/wood.png', data: wood },
      // The same bytes twice: one blob, two files.
      { path: 'textures/copy of wood.png', data: wood },
      { path: 'caches/empty.bphys', data: '' },
      { path: 'Ünïcode dir/日本.txt', data: 'names as the artist wrote them' },
      { path: PACK_MANIFEST_NAME, data: manifest },
    ];
    const key = await storeProject(s.storage, WS, files);
    const cache = newCache();
    const r = await assemble(s, cache, key, 'job-1');

    expect(r.files).toEqual(files.map((f) => f.path).sort());
    for (const f of files) expect(await readFile(path.join(r.root, ...f.path.split('/')))).toEqual(Buffer.from(f.data));
    expect(r.bytes).toBe(files.reduce((sum, f) => sum + Buffer.byteLength(f.data), 0));
    expect(r.manifest?.sceneFile).toBe('scenes/main.blend');
    // 4 distinct non-empty blobs, each read once; the empty file was never asked for.
    const distinct = [files[0]!, files[1]!, files[4]!, files[5]!];
    expect(r.blobCache).toEqual({
      hits: 0,
      misses: 4,
      bytesFetched: distinct.reduce((sum, f) => sum + Buffer.byteLength(f.data), 0),
    });
    expect(s.blobGets()).toHaveLength(4);

    const cached = await stat(cache.pathOf(blobOf(wood)));
    const linked = await stat(path.join(r.root, 'textures', 'wood.png'));
    expect(linked.ino).toBe(cached.ino);
    expect(cached.nlink).toBe(3); // the cache and the two project files
    expect(cached.mode & 0o777).toBe(0o444);
    expect((await stat(path.join(r.root, 'caches', 'empty.bphys'))).size).toBe(0);
    // Nothing but the blobs: no temporary files left behind.
    expect(await cacheFiles(cache)).toHaveLength(4);
    expect((await readdir(path.join(base, 'work', 'job-1'))).sort()).toEqual(['project']);
  });

  it('downloads for the next job only the blob it lacks', async () => {
    const shared = [texture(1), texture(2), texture(3)];
    const cache = newCache();
    const first = await storeProject(s.storage, WS, [
      { path: 'a.blend', data: 'BLENDER first' },
      ...shared.map((data, i) => ({ path: `tex/${i}.png`, data })),
    ]);
    expect((await assemble(s, cache, first, 'job-1')).blobCache).toMatchObject({ hits: 0, misses: 4 });

    const changed = Buffer.from('BLENDER second, edited');
    const second = await storeProject(s.storage, WS, [
      { path: 'a.blend', data: changed },
      ...shared.map((data, i) => ({ path: `textures/${i}.png`, data })),
    ]);
    s.gets.length = 0;
    const r = await assemble(s, cache, second, 'job-2');
    expect(r.blobCache).toEqual({ hits: 3, misses: 1, bytesFetched: changed.length });
    expect(s.blobGets()).toEqual([blobKey(WS, blobOf(changed))]);
    expect(await readFile(path.join(r.root, 'textures', '2.png'))).toEqual(shared[2]);
  });

  it('refuses a blob whose stored bytes do not match, caches none of it, and retries the task', async () => {
    const good = texture(7);
    const want = blobOf(good);
    const tampered = Buffer.from(good);
    tampered[100] = tampered[100]! ^ 0xff;
    await s.storage.put(blobKey(WS, want), Readable.from([tampered]));
    const key = await storeDocument(s.storage, WS, {
      version: 1,
      entries: [
        { path: 'scene.blend', ...blobOf('BLENDER x') },
        { path: 'tex.png', ...want },
      ],
    });
    await s.storage.put(blobKey(WS, blobOf('BLENDER x')), Readable.from([Buffer.from('BLENDER x')]));
    const cache = newCache();

    const err = await assemble(s, cache, key, 'job-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlobIntegrityError);
    expect((err as BlobIntegrityError).details).toMatchObject({
      code: 'BLOB_INTEGRITY',
      sha256: want.sha256,
      size: want.size,
      gotSize: want.size,
    });
    expect((err as BlobIntegrityError).details.gotSha256).toBe(blobOf(tampered).sha256);
    const outcome = asTaskOutcome(err);
    expect(outcome).toBeInstanceOf(RetryableTaskError);
    expect((outcome as RetryableTaskError).message).toMatch(/damaged/);
    // The good blob of the project may be cached; the damaged one is not, nor any temporary file.
    expect(await cacheFiles(cache)).not.toContain(path.relative(cache.dir, cache.pathOf(want)));
    expect((await cacheFiles(cache)).filter((f) => f.endsWith('.part'))).toEqual([]);
    expect(await readdir(path.join(base, 'work', 'job-1'))).toEqual([]);

    // An object longer than its blob is stopped at the blob's size, not read to the end.
    const short = blobOf('x'.repeat(10));
    await s.storage.put(blobKey(WS, short), Readable.from([randomBytes(4 * 1024 * KiB)]));
    const longKey = await storeDocument(s.storage, WS, { version: 1, entries: [{ path: 'x.txt', ...short }] });
    const long = await assemble(s, cache, longKey, 'job-2').catch((e: unknown) => e);
    expect((long as BlobIntegrityError).details).toMatchObject({ sha256: short.sha256, gotSha256: null });
    expect(await stat(cache.pathOf(short)).catch(() => 'absent')).toBe('absent');
  });

  it('downloads a blob once when two jobs want it at the same time', async () => {
    const shared = [texture(10, 512 * KiB), texture(11, 512 * KiB)];
    const cache = newCache();
    const keys: string[] = [];
    for (const name of ['one', 'two'])
      keys.push(
        await storeProject(s.storage, WS, [
          { path: `${name}.blend`, data: `BLENDER ${name}` },
          ...shared.map((data, i) => ({ path: `t/${i}.png`, data })),
        ]),
      );
    s.gets.length = 0;
    const [a, b] = await Promise.all(keys.map((k, i) => assemble(s, cache, k, `job-${i}`)));
    expect(a!.files).toEqual(['one.blend', 't/0.png', 't/1.png']);
    expect(b!.files).toEqual(['t/0.png', 't/1.png', 'two.blend']);
    const counts = new Map<string, number>();
    for (const k of s.blobGets()) counts.set(k, (counts.get(k) ?? 0) + 1);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(counts.size).toBe(4);
    expect(a!.blobCache.bytesFetched + b!.blobCache.bytesFetched).toBe(
      shared[0]!.length + shared[1]!.length + 'BLENDER one'.length + 'BLENDER two'.length,
    );
    for (const r of [a!, b!]) expect(await readFile(path.join(r.root, 't', '1.png'))).toEqual(shared[1]);
  });
});

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
    expect(await readFile(path.join(base, 'work', 'j1', 'project', 't1.png'))).toEqual(tex[1]);
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
    const dir = path.join(base, 'shared-cache');
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
    const dir = path.join(base, 'shared-cache');
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
    const jobDir = path.join(base, 'work', 'j1');
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
    if (!shm || (await stat(shm)).dev === (await stat(base)).dev) {
      ctx.skip(); // needs a second filesystem (tmpfs /dev/shm) beside the temp folder's
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
