// A worker builds a job's project from blobs through its local cache, on real object storage
// (files, and S3 on s3rver): byte for byte, each blob downloaded once per machine however many jobs
// want it, and damaged blobs refused and never cached. The cache's own upkeep on one machine is in
// blob-cache.test.ts.
import { randomBytes } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PACK_MANIFEST_NAME } from '../../../shared/pack/manifest.js';
import { blobKey } from '../../../service/domain/blob-project.js';
import { BlobIntegrityError } from '../../../service/worker/project/blob-integrity.js';
import { asTaskOutcome, RetryableTaskError } from '../../../service/worker/runtime/outcomes.js';
import { blobOf, counting, storeDocument, storeProject, STORAGES, type CountedStorage } from './blob-store.js';
import { assemble, cacheFiles, KiB, newCache, scratch, texture, useScratch, WS } from './blob-cache-harness.js';

useScratch();

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
    expect((await readdir(path.join(scratch(), 'work', 'job-1'))).sort()).toEqual(['project']);
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
    expect(await readdir(path.join(scratch(), 'work', 'job-1'))).toEqual([]);

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
