// test-loop: full (unpacks zip bombs up to the per-job quota).
// The zip-bomb guard judges what is really written, never how well data compresses: an honest
// project of sparse caches unpacks, a bomb stops at the per-job quota (or at its lying header)
// with nothing left on disk, overlapping entries are refused, and a full disk is retryable.
import { createHash } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createDeflateRaw, crc32 } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { packFolder } from '../../daemon/pack/pack-project.js';
import { asTaskOutcome, RetryableTaskError } from '../../service/worker/runtime/outcomes.js';
import { DiskSpaceError, UnpackError } from '../../zip/errors.js';
import { unpackSource, type UnpackOptions } from '../../zip/unpack.js';
import { buildZip } from './zip-writer.js';

const MiB = 1024 * 1024;
let base: string;
let jobDir: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'rb-unpack-quota-'));
  jobDir = join(base, 'jobs', 'job-1');
  mkdirSync(jobDir, { recursive: true });
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function unzip(source: string, extra: Partial<UnpackOptions> = {}) {
  return unpackSource({ source, fileType: 'zip', jobDir, ...extra });
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => expect.unreachable('the unpack should have been refused'),
    (e: unknown) => e,
  );
}

async function sha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** The job folder holds nothing: no project, no temporary folder. */
function expectJobDirEmpty(): void {
  expect(readdirSync(jobDir)).toEqual([]);
}

/** A sparse simulation cache as Blender writes them: `head` bytes of text, then zeros up to `size`. */
function sparseCache(file: string, size: number, head = 64 * 1024): void {
  mkdirSync(join(file, '..'), { recursive: true });
  const line = 'point 0.125 -3.5 7.25 velocity 0 0 -9.81\n';
  writeFileSync(file, line.repeat(Math.ceil(head / line.length)).slice(0, head));
  truncateSync(file, size);
}

const BOMB_BYTES = 2 * 1024 * MiB;
/** The deflated 2 GiB of zeros, made once for the file's tests (about 2 MiB; seconds of CPU). */
let bombBody: Promise<{ deflated: Buffer; crc: number }> | undefined;

function deflatedZeros(): Promise<{ deflated: Buffer; crc: number }> {
  bombBody ??= (async () => {
    const body = join(mkdtempSync(join(tmpdir(), 'rb-bomb-')), 'bomb.deflate');
    const chunk = Buffer.alloc(16 * MiB);
    let crc = 0;
    for (let left = BOMB_BYTES; left > 0; left -= chunk.length) crc = crc32(chunk, crc);
    await pipeline(
      (async function* () {
        for (let left = BOMB_BYTES; left > 0; left -= chunk.length) yield chunk;
      })(),
      createDeflateRaw({ level: 1 }),
      createWriteStream(body),
    );
    const deflated = readFileSync(body);
    rmSync(join(body, '..'), { recursive: true, force: true });
    return { deflated, crc };
  })();
  return bombBody;
}

/**
 * A real deflate bomb: one entry of 2 GiB of zeros, honestly declared unless `declaredSize` says
 * otherwise (no zip64: below 4 GiB), streamed so the test never holds 2 GiB in memory.
 */
async function zeroBomb(file: string, declaredSize = BOMB_BYTES): Promise<void> {
  const { deflated, crc } = await deflatedZeros();
  // buildZip deflates its data itself; patch the stored entry to say DEFLATE instead.
  const zip = buildZip([{ name: 'cache/bomb.bin', data: deflated, method: 0, declaredSize, declaredCrc: crc }]);
  const cdAt = zip.readUInt32LE(zip.length - 22 + 16);
  zip.writeUInt16LE(8, 8); // local header: method
  zip.writeUInt16LE(8, cdAt + 10); // central header: method
  writeFileSync(file, zip);
}

describe('honest projects are never judged by how well they compress', () => {
  it('unpacks, byte for byte, a project with a 64 MiB sparse cache packed by the real packer', async () => {
    const proj = join(base, 'proj');
    mkdirSync(proj);
    writeFileSync(join(proj, 'shot.blend'), 'BLENDER-v304');
    sparseCache(join(proj, 'cache', 'sim_0001.bphys'), 64 * MiB);
    const packed = await packFolder(proj, { zipPath: join(base, 'upload.zip') });
    // About 1000:1: the old guard refused this (ZIP_RATIO, "looks like a zip bomb").
    expect(packed.bytes).toBeLessThan(MiB);
    const r = await unzip(packed.zipPath);
    expect(r.files).toEqual(['cache/sim_0001.bphys', 'renderbridge-manifest.json', 'shot.blend']);
    expect(await sha256(join(r.root, 'cache', 'sim_0001.bphys'))).toBe(
      await sha256(join(proj, 'cache', 'sim_0001.bphys')),
    );
  });

  it('stores a nested zip as a file: archives inside the upload are never unpacked', async () => {
    const inner = buildZip([{ name: 'inner.blend', data: 'x'.repeat(1000) }]);
    const r = await unzip(
      writeZip(
        buildZip([
          { name: 'a.blend', data: 'a' },
          { name: 'libs/inner.zip', data: inner },
        ]),
      ),
    );
    expect(r.files).toEqual(['a.blend', 'libs/inner.zip']);
    expect(await sha256(join(r.root, 'libs', 'inner.zip'))).toBe(createHash('sha256').update(inner).digest('hex'));
  });
});

function writeZip(bytes: Buffer): string {
  const file = join(base, 'upload.zip');
  writeFileSync(file, bytes);
  return file;
}

describe('bombs stop at what would really be written', () => {
  it('refuses a 2 GiB deflate bomb above the quota before writing a byte, removes the temporary folder', async () => {
    const file = join(base, 'upload.zip');
    await zeroBomb(file);
    const quota = 64 * MiB;
    const err = await rejection(unzip(file, { limits: { maxTotalBytes: quota } }));
    expect(err).toBeInstanceOf(UnpackError);
    expect((err as UnpackError).code).toBe('ZIP_TOO_LARGE');
    expect((err as UnpackError).details).toMatchObject({ maxTotalBytes: quota });
    expect((err as UnpackError).message).toMatch(/quota/);
    expectJobDirEmpty();
  });

  it(
    'stops a bomb whose header lies about its size on its real bytes: the disk never holds more than the ' +
      'header said',
    async () => {
      const file = join(base, 'upload.zip');
      await zeroBomb(file, MiB);
      const err = await rejection(unzip(file));
      expect((err as UnpackError).code).toBe('ZIP_SIZE_MISMATCH');
      expectJobDirEmpty();
    },
  );

  it('counts the quota on the real bytes of many small entries', async () => {
    const entries = Array.from({ length: 5 }, (_, i) => ({ name: `part${i}.bin`, data: Buffer.alloc(300, i) }));
    const err = await rejection(unzip(writeZip(buildZip(entries)), { limits: { maxTotalBytes: 1000 } }));
    expect((err as UnpackError).code).toBe('ZIP_TOO_LARGE');
    expectJobDirEmpty();
  });

  it('refuses entries whose data overlap (the non-recursive overlap bomb) before writing', async () => {
    // Two central-directory entries pointing at the same local header and data.
    const zip = buildZip([
      { name: 'a.blend', data: 'a'.repeat(5000) },
      { name: 'b.blend', data: 'b'.repeat(5000) },
    ]);
    const cdAt = zip.readUInt32LE(zip.length - 22 + 16);
    const second = cdAt + 46 + 'a.blend'.length;
    expect(zip.readUInt32LE(second)).toBe(0x02014b50);
    // Same name length, so the local header at 0 agrees with the second central entry's name length.
    zip.writeUInt32LE(0, second + 42);
    zip.set(zip.subarray(cdAt + 16, cdAt + 28), second + 16); // CRC and sizes of the first entry
    const err = await rejection(unzip(writeZip(zip)));
    expect((err as UnpackError).code).toBe('ZIP_OVERLAPPING_ENTRIES');
    expectJobDirEmpty();
  });

  it('answers a disk too full for the archive with a retryable error, not a refusal of the upload', async () => {
    const file = writeZip(buildZip([{ name: 'a.blend', data: 'a'.repeat(5000) }]));
    // No real disk can be filled here: a margin larger than any disk stands for it.
    const err = await rejection(unzip(file, { limits: { minFreeBytes: Number.MAX_SAFE_INTEGER } }));
    expect(err).toBeInstanceOf(DiskSpaceError);
    expect(asTaskOutcome(err)).toBeInstanceOf(RetryableTaskError);
    expect(err).not.toBeInstanceOf(UnpackError);
    expect((err as Error).message).toMatch(/free/);
    expectJobDirEmpty();
  });
});
