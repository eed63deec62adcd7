// Filesystem storage taking local files (putFile): on its own disk a rendered frame becomes the
// object without a copy (a second name of the same file); from another disk it is copied whole.
// The behaviour every adapter shares is in the ObjectStorage conformance suite.
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { mkdtemp, open, readFile, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsObjectStorage } from '../../../service/adapters/fs-storage/fs-storage.js';
import { UrlSigner } from '../../../service/adapters/fs-storage/url-signer.js';

let root: string;
let storage: FsObjectStorage;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'rb-fs-files-'));
  storage = new FsObjectStorage(path.join(root, 'objects'), new UrlSigner(randomBytes(32)), () => 'http://127.0.0.1:1');
  await storage.init();
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** A tmpfs on another device than the store, where Linux has one (/dev/shm). */
function otherDisk(): string | undefined {
  try {
    return statSync('/dev/shm').dev !== statSync(tmpdir()).dev ? '/dev/shm' : undefined;
  } catch {
    return undefined;
  }
}

describe('filesystem storage of local files', () => {
  it('makes a file on its own disk the object without copying it', async () => {
    const file = path.join(root, 'f_0001.png');
    await writeFile(file, randomBytes(50_000));
    await storage.putFile('ws/job/frames/f_0001.png', file);
    const object = await stat(storage.filePath('ws/job/frames/f_0001.png'));
    const local = await stat(file);
    expect(object.ino).toBe(local.ino);
    expect(local.nlink).toBe(2);
  });

  const shm = otherDisk();
  if (!shm)
    console.log(
      'skipped "copies a file from another disk": /dev/shm is missing or on the same device as the temp folder',
    );
  it.skipIf(!shm)('copies a file from another disk whole, as a file of its own', async () => {
    const dir = await mkdtemp(path.join(shm!, 'rb-fs-files-'));
    try {
      const file = path.join(dir, 'f_0002.png');
      const data = randomBytes(300_000);
      await writeFile(file, data);
      expect(await storage.putFile('ws/job/frames/f_0002.png', file)).toEqual({ size: data.length });
      const objectPath = storage.filePath('ws/job/frames/f_0002.png');
      expect((await stat(objectPath)).ino).not.toBe((await stat(file)).ino);
      expect((await readFile(objectPath)).equals(data)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it(
    "persists objects stored unsynced by syncing each one's file, which on its own disk is the rendered file " +
      'itself',
    async () => {
      // What reaches the disk cannot be seen without pulling the power: the test watches the syncs
      // persist asks the kernel for (FileHandle.datasync, the fdatasync(2) call) and which file each is.
      const files = await Promise.all(
        [3, 4].map(async (n) => {
          const file = path.join(root, `f_000${n}.png`);
          await writeFile(file, randomBytes(10_000));
          await storage.putFile(`ws/job/frames/f_000${n}.png`, file, { sync: false });
          return file;
        }),
      );
      const probe = await open(files[0]!, 'r');
      const proto = Object.getPrototypeOf(probe) as { datasync: (this: FileHandle) => Promise<void> };
      await probe.close();
      const real = proto.datasync;
      const synced: number[] = [];
      proto.datasync = async function (this: FileHandle) {
        synced.push((await this.stat()).ino);
        return real.call(this);
      };
      try {
        await storage.persist(['ws/job/frames/f_0003.png', 'ws/job/frames/gone.png', 'ws/job/frames/f_0004.png']);
      } finally {
        proto.datasync = real;
      }
      const inodes = await Promise.all(files.map(async (f) => (await stat(f)).ino));
      expect(synced.sort()).toEqual(inodes.sort());
    },
  );
});
