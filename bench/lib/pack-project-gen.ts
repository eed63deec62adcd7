// The project bench:pack packs: generated files, half compressible and half random, read once
// afterwards so that both tools start from the same warm page cache.
import { randomFillSync } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';

const MiB = 1024 * 1024;

/** Deterministic-enough text like an .obj export: one block per seed, 1 MiB. */
function textBlock(seed: number): Buffer {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < MiB; i++) {
    const r = Math.random;
    const line =
      i % 5 === 4
        ? `f ${i} ${i + 1} ${i + 2 + seed}\n`
        : `v ${(r() * 20 - 10).toFixed(6)} ${(r() * 20 - 10).toFixed(6)} ${(r() * 4).toFixed(6)}\n`;
    lines.push(line);
    size += line.length;
  }
  return Buffer.from(lines.join('')).subarray(0, MiB);
}

/** Binary mesh-like data: sequential int32 indices and smooth float32 positions (compresses, but less than text). */
function meshBlock(seed: number): Buffer {
  const buf = Buffer.alloc(MiB);
  for (let i = 0; i < MiB / 16; i++) {
    buf.writeInt32LE(i * 3 + seed, i * 16);
    buf.writeFloatLE(Math.sin(i / 500 + seed) * 4, i * 16 + 4);
    buf.writeFloatLE(Math.cos(i / 700) * 4, i * 16 + 8);
    buf.writeFloatLE(Math.round(Math.random() * 64) / 64, i * 16 + 12);
  }
  return buf;
}

/** Writes `size` bytes to `file` from `next()` blocks. */
async function writeBlocks(file: string, size: number, next: (i: number) => Buffer): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const fh = await open(file, 'wx');
  try {
    for (let done = 0, i = 0; done < size; i++) {
      const b = next(i);
      const chunk = b.subarray(0, Math.min(b.length, size - done));
      await fh.write(chunk);
      done += chunk.length;
    }
  } finally {
    await fh.close();
  }
}

/**
 * Half compressible (a .blend-like file, .obj text, binary mesh caches, many small text files),
 * half incompressible (random bytes named .png and .exr). Returns the file count.
 */
export async function generate(dir: string, total: number): Promise<number> {
  const half = total / 2;
  const texts = Array.from({ length: 8 }, (_, i) => textBlock(i));
  const meshes = Array.from({ length: 4 }, (_, i) => meshBlock(i));
  const pick = <T>(xs: T[], i: number): T => xs[(i * 7 + 3) % xs.length]!;
  let files = 0;
  const add = async (rel: string, size: number, next: (i: number) => Buffer) => {
    await writeBlocks(path.join(dir, rel), size, next);
    files++;
  };
  // The .blend interleaves structured binary and text-like blocks, as a saved scene does.
  await add('scene.blend', half / 8, (i) =>
    i === 0 ? Buffer.concat([Buffer.from('BLENDER-v304'), pick(meshes, i)]) : i % 2 ? pick(texts, i) : pick(meshes, i),
  );
  for (let n = 0; n < 4; n++) await add(`meshes/prop_${n}.obj`, half / 8, (i) => pick(texts, i + n));
  for (let n = 0; n < 2; n++) await add(`cache/sim_${n}.bin`, half / 8, (i) => pick(meshes, i + n));
  const small = half / 8 / 1024;
  for (let n = 0; n < 1024; n++)
    await add(`scripts/s${Math.floor(n / 64)}/note_${n}.txt`, small, (i) =>
      pick(texts, i + n).subarray((n * 997) % 4096),
    );
  const noise = Buffer.alloc(8 * MiB);
  const random = () => randomFillSync(noise);
  for (let n = 0; n < 48; n++) await add(`textures/tex_${n}.png`, (half * 3) / 4 / 48, random);
  for (let n = 0; n < 8; n++) await add(`textures/hdri_${n}.exr`, half / 4 / 8, random);
  return files;
}

/** Reads every file once so both tools start from the same, warm page cache. */
export async function warm(dir: string): Promise<void> {
  const { walkFiles } = await import('../../daemon/pack/expand.js');
  const sink = () => new Writable({ write: (_c, _e, cb) => cb() });
  for (const f of (await walkFiles(dir)).files) await pipeline(createReadStream(f, { highWaterMark: MiB }), sink());
}
