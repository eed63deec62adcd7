// streamZip against real filesystem storage and `unzip`: what the archive holds, and that a missing
// file or an abort fails it whole and leaves no file open and nothing stored.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readlink, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FsObjectStorage } from '../../service/adapters/fs-storage/fs-storage.js';
import { UrlSigner } from '../../service/adapters/fs-storage/url-signer.js';
import type { ObjectStorage } from '../../service/ports/storage.js';
import { streamZip } from '../../zip/stream-zip.js';
import { storedKeys } from '../helpers/stored-keys.js';

const run = promisify(execFile);
let root: string;
let storageRoot: string;
let storage: FsObjectStorage;
/** A small file that is there, beside ones that are not. */
let present: string;

/**
 * This process's open descriptors on files under `dir` or the storage root. Counting only those (not
 * every descriptor) keeps the check true when the unit loop runs other files in the same worker, whose
 * sockets and handles open and close on their own time.
 */
async function openUnder(dir: string): Promise<string[]> {
  const targets = await Promise.all(
    (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
  );
  return targets.filter((t) => t.startsWith(dir + path.sep) || t.startsWith(storageRoot + path.sep));
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'rb-stream-zip-test-'));
  present = path.join(root, 'f_0001_L.png');
  await writeFile(present, randomBytes(2000));
});
afterAll(() => rm(root, { recursive: true, force: true }));

beforeEach(async () => {
  storageRoot = path.join(root, `objects-${randomUUID()}`);
  storage = new FsObjectStorage(storageRoot, new UrlSigner(randomBytes(32)), () => 'http://127.0.0.1:1');
  await storage.init();
});

describe('streamZip', () => {
  it('fails instead of leaving out a missing file, even when the sink attaches late', async () => {
    const entries = [
      { path: present, name: 'a.png' },
      { path: path.join(root, 'gone.png'), name: 'gone.png' },
    ];
    const late = async (body: Parameters<ObjectStorage['put']>[1]) => {
      await new Promise((r) => setTimeout(r, 20));
      return storage.put('zips/late.zip', body);
    };
    await expect(streamZip(entries, late)).rejects.toThrow(/ENOENT/);
    expect(await storedKeys(storageRoot)).toEqual([]);
  });

  it(
    'reads small files whole and streams large ones, in order, with their bytes, dates and modes, however ' +
      'little it may read ahead',
    async () => {
      const dir = path.join(root, `mixed-${randomUUID()}`);
      await mkdir(dir);
      const sizes = [10, 300_000, 0, 5000, 70_000, 1];
      const files = sizes.map((n, i) => ({
        path: path.join(dir, `e${i}.bin`),
        name: `sub/e${i}.bin`,
        bytes: randomBytes(n),
      }));
      for (const [i, f] of files.entries()) {
        await writeFile(f.path, f.bytes);
        await chmod(f.path, i % 2 ? 0o640 : 0o600);
        // Dates two days apart: a ZIP keeps local time to 2 s, and each entry must carry its file's.
        await utimes(f.path, new Date(Date.UTC(2024, 0, 1 + 2 * i, 12)), new Date(Date.UTC(2024, 0, 1 + 2 * i, 12)));
      }
      // 64 KiB and over stream from disk; at most 1 byte of read files waits for the archive.
      const key = await streamZip(
        files,
        (body) => storage.put('zips/mixed.zip', body).then(() => 'zips/mixed.zip'),
        undefined,
        { wholeFileMax: 65_536, readAheadBytes: 1 },
      );
      const zip = storage.filePath(key);
      expect((await run('unzip', ['-Z1', zip])).stdout.trim().split('\n')).toEqual(files.map((f) => f.name));
      for (const f of files) {
        const { stdout } = await run('unzip', ['-p', zip, f.name], { encoding: 'buffer' });
        expect(Buffer.compare(stdout, f.bytes)).toBe(0);
      }
      const out = path.join(dir, 'x');
      await run('unzip', ['-q', zip, '-d', out]);
      for (const [i, f] of files.entries()) {
        const st = await stat(path.join(out, f.name));
        expect(st.mode & 0o777).toBe(i % 2 ? 0o640 : 0o600);
        expect(Math.abs(st.mtimeMs - Date.UTC(2024, 0, 1 + 2 * i, 12))).toBeLessThanOrEqual(2000);
      }
    },
  );

  it('a missing file among large ones fails the archive and leaves no file open', async () => {
    const dir = path.join(root, `fds-${randomUUID()}`);
    await mkdir(dir);
    const files = Array.from({ length: 8 }, (_, i) => ({ path: path.join(dir, `big${i}.bin`), name: `big${i}.bin` }));
    for (const f of files) await writeFile(f.path, randomBytes(200_000));
    const entries = [...files.slice(0, 3), { path: path.join(dir, 'gone.bin'), name: 'gone.bin' }, ...files.slice(3)];
    await expect(
      streamZip(entries, (body) => storage.put('zips/fds.zip', body), undefined, { wholeFileMax: 1000 }),
    ).rejects.toThrow(/ENOENT/);
    // Handles opened ahead of the failure close as their reads settle.
    await expect.poll(() => openUnder(dir)).toEqual([]);
    expect(await storedKeys(storageRoot)).toEqual([]);
  });

  it('an abort while large files stream leaves no file open', async () => {
    const dir = path.join(root, `abort-fds-${randomUUID()}`);
    await mkdir(dir);
    const files = Array.from({ length: 6 }, (_, i) => ({ path: path.join(dir, `big${i}.bin`), name: `big${i}.bin` }));
    for (const f of files) await writeFile(f.path, randomBytes(300_000));
    const ac = new AbortController();
    const sink = (body: Parameters<ObjectStorage['put']>[1]) => {
      (body as NodeJS.ReadableStream).once('data', () => ac.abort(new Error('stop')));
      return storage.put('zips/abort-fds.zip', body);
    };
    await expect(streamZip(files, sink, ac.signal, { wholeFileMax: 1000, readAheadBytes: 1 })).rejects.toThrow('stop');
    await expect.poll(() => openUnder(dir)).toEqual([]);
    expect(await storedKeys(storageRoot)).toEqual([]);
  });

  it('an abort before the sink attaches rejects without an unhandled error', async () => {
    const ac = new AbortController();
    const late = async (body: Parameters<ObjectStorage['put']>[1]) => {
      ac.abort(new Error('stop'));
      await new Promise((r) => setTimeout(r, 20));
      return storage.put('zips/aborted.zip', body);
    };
    await expect(streamZip([{ path: present, name: 'a.png' }], late, ac.signal)).rejects.toThrow('stop');
    expect(await storedKeys(storageRoot)).toEqual([]);
  });
});
