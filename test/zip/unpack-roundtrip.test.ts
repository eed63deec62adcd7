// test-loop: full (writes a 256 MiB sparse cache per run).
// Property: any project the real packer (daemon/pack) accepts, whatever its files' compressibility
// (random, text, sparse caches, all zeros), the worker's unpacker restores byte for byte. The
// zip-bomb guard must never judge honest data; one run always holds a 256 MiB sparse cache.
import { createCipheriv, createHash } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { packFolder } from '../../daemon/pack/pack-project.js';
import { unpackSource } from '../../zip/unpack.js';

const KiB = 1024;
const MiB = 1024 * KiB;
/** Runs besides the big example: each packs, unpacks and hashes a few MiB on 2 shared cores. */
const RUNS = 8;

type Kind = 'random' | 'text' | 'sparse' | 'zeros';
interface FileSpec {
  kind: Kind;
  size: number;
  ext: string;
  seed: number;
}

const base = mkdtempSync(join(tmpdir(), 'rb-roundtrip-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Deterministic content of `size` bytes, written in 1 MiB pieces (never whole in memory). */
function writeContent(file: string, spec: FileSpec): void {
  const { kind, size, seed } = spec;
  if (kind === 'zeros' || kind === 'sparse') {
    // sparse: a text head (as a simulation cache's header), then a hole up to the size.
    writeFileSync(file, kind === 'sparse' ? textBytes(Math.min(size, 64 * KiB), seed) : '');
    truncateSync(file, size);
    return;
  }
  const key = createHash('sha256').update(`key ${seed}`).digest().subarray(0, 16);
  const cipher = createCipheriv('aes-128-ctr', key, Buffer.alloc(16)); // a fast seeded byte stream
  const fd = openSync(file, 'w');
  try {
    for (let done = 0; done < size;) {
      const n = Math.min(MiB, size - done);
      writeSync(fd, kind === 'random' ? cipher.update(Buffer.alloc(n)) : textBytes(n, seed + done));
      done += n;
    }
  } finally {
    closeSync(fd);
  }
}

/** `n` bytes of OBJ-like text. */
function textBytes(n: number, seed: number): Buffer {
  const lines: string[] = [];
  let len = 0;
  for (let i = 0; len < n; i++) {
    const line = `v ${((seed + i) * 0.137).toFixed(4)} ${(i * 1.61).toFixed(3)} ${((seed ^ i) % 977) / 7}\n`;
    lines.push(line);
    len += line.length;
  }
  return Buffer.from(lines.join('')).subarray(0, n);
}

async function sha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

let runNo = 0;

async function roundTrip(specs: FileSpec[]): Promise<void> {
  const run = join(base, `run-${runNo++}`);
  const proj = join(run, 'proj');
  mkdirSync(join(proj, 'cache'), { recursive: true });
  try {
    writeFileSync(join(proj, 'scene.blend'), 'BLENDER-v304');
    const names = specs.map((s, i) => `cache/f${i}.${s.ext}`);
    specs.forEach((s, i) => writeContent(join(proj, names[i] as string), s));
    const packed = await packFolder(proj, { zipPath: join(run, 'upload.zip') });
    const r = await unpackSource({ source: packed.zipPath, fileType: 'zip', jobDir: join(run, 'job') });
    expect(r.files).toEqual([...names, 'renderbridge-manifest.json', 'scene.blend'].sort());
    for (const name of ['scene.blend', ...names]) {
      expect(await sha256(join(r.root, name)), name).toBe(await sha256(join(proj, name)));
    }
  } finally {
    rmSync(run, { recursive: true, force: true });
  }
}

const kindArb = fc.constantFrom<Kind>('random', 'text', 'sparse', 'zeros');
// Sizes around the packer's 64 KiB sample and the old 1 MiB ratio threshold, up to a few MiB.
const sizeArb = fc.constantFrom(0, 1, 4095, 64 * KiB - 1, 64 * KiB, 64 * KiB + 1, MiB + 17, 3 * MiB, 6 * MiB);
// Extensions the packer stores without trying (png, vdb) and ones it judges by content.
const extArb = fc.constantFrom('bphys', 'vdb', 'blend', 'txt', 'bin', 'png', 'abc');
const fileArb = fc.record({ kind: kindArb, size: sizeArb, ext: extArb, seed: fc.nat(1_000_000) });

describe('pack then unpack', () => {
  it('restores every file byte for byte, whatever its compressibility (one run: a 256 MiB sparse cache)', async () => {
    await fc.assert(fc.asyncProperty(fc.array(fileArb, { minLength: 1, maxLength: 4 }), roundTrip), {
      numRuns: RUNS,
      // Always tried first: the large files the issue is about, as Blender writes them.
      examples: [
        [
          [
            { kind: 'sparse', size: 256 * MiB, ext: 'bphys', seed: 1 },
            { kind: 'zeros', size: 32 * MiB, ext: 'vdb', seed: 2 },
            { kind: 'random', size: 8 * MiB, ext: 'blend', seed: 3 },
          ],
        ],
      ],
    });
  }, 180_000);
});
