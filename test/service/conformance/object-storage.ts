// One conformance suite for every ObjectStorage adapter (filesystem now; S3 with the scale-out).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { ObjectExistsError, ObjectTooLargeError, type ObjectStorage } from '../../../service/ports/storage.js';

export interface StorageHarness {
  storage: ObjectStorage;
  close(): Promise<void>;
}

export interface ConformanceScope {
  /**
   * Whether the adapter signs URLs for clients (presignGet/presignPut). Default true; a
   * remote worker's storage signs none.
   */
  presign?: boolean;
}

export function objectStorageConformance(
  name: string,
  open: () => Promise<StorageHarness>,
  scope: ConformanceScope = {},
): void {
  describe(`ObjectStorage conformance: ${name}`, () => {
    const withStorage = (fn: (s: ObjectStorage) => Promise<void>) => async () => {
      const h = await open();
      try {
        await fn(h.storage);
      } finally {
        await h.close();
      }
    };

    it(
      'stores a stream and reports its size and sha256',
      withStorage(async (s) => {
        const data = Buffer.alloc(300_000, 3);
        const r = await s.put('a/b/c.bin', Readable.from([data.subarray(0, 1000), data.subarray(1000)]));
        expect(r).toEqual({ size: data.length, sha256: createHash('sha256').update(data).digest('hex') });
        expect(await s.stat('a/b/c.bin')).toEqual({ size: data.length });
        expect((await buffer(await s.get('a/b/c.bin'))).equals(data)).toBe(true);
      }),
    );

    it(
      'stores an object put without waiting for the disk (a task log) whole, visible once complete, never overwriting',
      withStorage(async (s) => {
        const data = Buffer.alloc(5_000_000, 7);
        const r = await s.put('logs/x/a1.log', Readable.from([data.subarray(0, 4096), data.subarray(4096)]), {
          sync: false,
        });
        expect(r.size).toBe(data.length);
        expect((await buffer(await s.get('logs/x/a1.log'))).equals(data)).toBe(true);
        await expect(
          s.put('logs/x/a1.log', Readable.from([Buffer.from('again')]), { sync: false }),
        ).rejects.toBeInstanceOf(ObjectExistsError);
      }),
    );

    it(
      'never overwrites an existing object',
      withStorage(async (s) => {
        await s.put('once.bin', Readable.from([Buffer.from('first')]));
        await expect(s.put('once.bin', Readable.from([Buffer.from('second')]))).rejects.toBeInstanceOf(
          ObjectExistsError,
        );
        expect((await buffer(await s.get('once.bin'))).toString()).toBe('first');
      }),
    );

    it(
      'stores a local file, which keeps its bytes when the file is renamed, replaced or deleted, and never overwrites',
      withStorage(async (s) => {
        const dir = await mkdtemp(path.join(tmpdir(), 'rb-putfile-'));
        try {
          const file = path.join(dir, 'f_0001.png');
          const data = Buffer.alloc(200_000, 5);
          await writeFile(file, data);
          expect(await s.putFile('jobs/j/frames/f_0001.png', file)).toEqual({ size: data.length });
          expect(await s.stat('jobs/j/frames/f_0001.png')).toEqual({ size: data.length });
          // A frame rendered again is moved over the old name; the old one goes with the job folder.
          await rename(file, path.join(dir, 'moved.png'));
          await writeFile(file, 'rendered again');
          await unlink(path.join(dir, 'moved.png'));
          expect((await buffer(await s.get('jobs/j/frames/f_0001.png'))).equals(data)).toBe(true);
          await expect(s.putFile('jobs/j/frames/f_0001.png', file)).rejects.toBeInstanceOf(ObjectExistsError);
          expect((await buffer(await s.get('jobs/j/frames/f_0001.png'))).equals(data)).toBe(true);
          // Unsynced (a copy's bytes may wait for the disk) and into a folder that does not exist yet.
          expect(await s.putFile('other/deep/x.png', file, { sync: false })).toEqual({ size: 14 });
          expect((await buffer(await s.get('other/deep/x.png'))).toString()).toBe('rendered again');
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }),
    );

    it(
      'stores a local file from another filesystem (a work folder on its own disk) whole',
      withStorage(async (s) => {
        // /dev/shm is a tmpfs on Linux: a store on the temp disk cannot link from it and copies.
        const dir = await mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'rb-putfile-'));
        try {
          const file = path.join(dir, 'f_0002.exr');
          const data = Buffer.alloc(3_000_000, 9);
          await writeFile(file, data);
          expect(await s.putFile('jobs/j/frames/f_0002.exr', file)).toEqual({ size: data.length });
          await unlink(file);
          expect((await buffer(await s.get('jobs/j/frames/f_0002.exr'))).equals(data)).toBe(true);
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }),
    );

    it(
      'persists objects stored without a sync, passing over keys that have no object',
      withStorage(async (s) => {
        const dir = await mkdtemp(path.join(tmpdir(), 'rb-persist-'));
        try {
          const frames = await Promise.all(
            [1, 2, 3].map(async (n) => {
              const file = path.join(dir, `f_000${n}.png`);
              await writeFile(file, Buffer.alloc(100_000 * n, n));
              await s.putFile(`jobs/p/frames/f_000${n}.png`, file, { sync: false });
              return file;
            }),
          );
          await s.persist([
            'jobs/p/frames/f_0001.png',
            'jobs/p/frames/f_0002.png',
            'jobs/p/frames/never-stored.png',
            'jobs/p/frames/f_0003.png',
          ]);
          await s.persist([]);
          for (const [i, file] of frames.entries()) {
            await unlink(file);
            expect(
              (await buffer(await s.get(`jobs/p/frames/f_000${i + 1}.png`))).equals(
                Buffer.alloc(100_000 * (i + 1), i + 1),
              ),
            ).toBe(true);
          }
          expect(await s.stat('jobs/p/frames/never-stored.png')).toBeUndefined();
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }),
    );

    it(
      'stores nothing for a missing file or an aborted store',
      withStorage(async (s) => {
        const dir = await mkdtemp(path.join(tmpdir(), 'rb-putfile-'));
        try {
          await expect(s.putFile('missing/f.png', path.join(dir, 'nothing-here.png'))).rejects.toMatchObject({
            code: 'ENOENT',
          });
          expect(await s.stat('missing/f.png')).toBeUndefined();
          const file = path.join(dir, 'f.png');
          await writeFile(file, 'frame');
          const ac = new AbortController();
          ac.abort(new Error('job canceled'));
          await expect(s.putFile('aborted/f.png', file, { signal: ac.signal })).rejects.toThrow('job canceled');
          expect(await s.stat('aborted/f.png')).toBeUndefined();
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }),
    );

    it(
      'refuses an object past maxBytes and leaves nothing behind',
      withStorage(async (s) => {
        await expect(s.put('big.bin', Readable.from([Buffer.alloc(2000)]), { maxBytes: 1000 })).rejects.toBeInstanceOf(
          ObjectTooLargeError,
        );
        expect(await s.stat('big.bin')).toBeUndefined();
      }),
    );

    it(
      'leaves nothing when the source stream fails midway',
      withStorage(async (s) => {
        const failing = new Readable({
          read() {
            this.push(Buffer.alloc(1000));
            this.destroy(new Error('connection reset'));
          },
        });
        await expect(s.put('broken.bin', failing)).rejects.toThrow('connection reset');
        expect(await s.stat('broken.bin')).toBeUndefined();
      }),
    );

    it(
      'deletes objects and prefixes',
      withStorage(async (s) => {
        await s.put('p/1', Readable.from([Buffer.from('1')]));
        await s.put('p/2', Readable.from([Buffer.from('2')]));
        await s.put('q/1', Readable.from([Buffer.from('3')]));
        await s.delete('p/1');
        expect(await s.stat('p/1')).toBeUndefined();
        await s.deletePrefix('p/');
        expect(await s.stat('p/2')).toBeUndefined();
        expect(await s.stat('q/1')).toEqual({ size: 1 });
      }),
    );

    it(
      'lists the objects under a prefix, in key order',
      withStorage(async (s) => {
        await s.put('l/b/2.png', Readable.from([Buffer.from('22')]));
        await s.put('l/a.png', Readable.from([Buffer.from('1')]));
        await s.put('l/b/1.png', Readable.from([Buffer.from('333')]));
        await s.put('lx/other', Readable.from([Buffer.from('x')]));
        const want = [
          { key: 'l/a.png', size: 1 },
          { key: 'l/b/1.png', size: 3 },
          { key: 'l/b/2.png', size: 2 },
        ];
        expect(await s.list('l/')).toEqual(want);
        expect(await s.list('l')).toEqual(want);
        expect(await s.list('l/b')).toEqual(want.slice(1));
        expect(await s.list('none/')).toEqual([]);
      }),
    );

    it.skipIf(scope.presign === false)(
      'presigns GET URLs that serve the object and PUT URLs that accept it',
      withStorage(async (s) => {
        await s.put('dl/x.png', Readable.from([Buffer.from('png bytes')]));
        const get = await s.presignGet('dl/x.png', { expiresAt: new Date(Date.now() + 60_000), fileName: 'x.png' });
        const r = await fetch(get);
        expect(r.status).toBe(200);
        expect(await r.text()).toBe('png bytes');
        const put = await s.presignPut('up/scene.blend', {
          expiresAt: new Date(Date.now() + 60_000),
          fileType: 'blend',
        });
        const p = await fetch(put, {
          method: 'PUT',
          headers: { 'content-type': 'application/octet-stream' },
          body: 'scene',
        });
        expect(p.status).toBe(200);
        expect(await s.stat('up/scene.blend')).toEqual({ size: 5 });
      }),
    );
  });
}
