// Which Blender saved a .blend, read from the file's first bytes without starting Blender: the
// worker must know it before it picks the build that opens the file (a 5.x file is "not a blend
// file" to 4.x and 3.x). Three layouts exist:
//   - Blender up to 4.x: 12 bytes, `BLENDER` + `-`/`_` (pointer size) + `v`/`V` (endianness) +
//     3 digits (`304` = 3.4);
//   - Blender 5.0 and later: `BLENDER` + 2 digits (header size, `17`) + `-` + 2 digits (low-level
//     format) + `v`/`V` + 4 digits (`0502` = 5.2);
//   - either one compressed: gzip (before 3.0) or zstd (3.0 and later, "Compress" in the save options).
// Only the first bytes are read (and, when compressed, decompressed).
import { open } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import { Decompress } from 'fzstd';

export interface BlendHeader {
  /** Major.minor of the Blender that saved the file (a header holds no patch number). */
  major: number;
  minor: number;
  /** `5.2`. */
  text: string;
  /** Low-level layout: 0 up to Blender 4.x, 1 from 5.0 (readers before 5.0 cannot open it). */
  formatVersion: number;
  compression: 'none' | 'gzip' | 'zstd';
}

export class BlendHeaderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BlendHeaderError';
  }
}

const OLD = /^BLENDER[-_][vV](\d)(\d\d)/;
const NEW = /^BLENDER(\d\d)-(\d\d)[vV](\d\d)(\d\d)/;
/** Bytes a header needs, compressed files included; more is never decompressed. */
const HEADER_BYTES = 17;
/** Compressed bytes read at most to get HEADER_BYTES out (a zstd frame's first block is far smaller). */
const MAX_COMPRESSED_READ = 4 * 1024 * 1024;

/** Parses the uncompressed first bytes of a .blend; undefined when they are not a .blend header. */
export function parseBlendHeader(
  head: Uint8Array,
  compression: BlendHeader['compression'] = 'none',
): BlendHeader | undefined {
  const text = Buffer.from(head.subarray(0, HEADER_BYTES)).toString('latin1');
  const old = OLD.exec(text);
  if (old) return make(Number(old[1]), Number(old[2]), 0, compression);
  const m = NEW.exec(text);
  if (m) return make(Number(m[3]), Number(m[4]), Number(m[2]), compression);
  return undefined;
}

function make(
  major: number,
  minor: number,
  formatVersion: number,
  compression: BlendHeader['compression'],
): BlendHeader {
  return { major, minor, text: `${major}.${minor}`, formatVersion, compression };
}

/** Reads the header of a .blend on disk. Throws BlendHeaderError when it is not one (or is damaged). */
export async function readBlendHeader(path: string): Promise<BlendHeader> {
  const fh = await open(path, 'r');
  try {
    const first = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await fh.read(first, 0, HEADER_BYTES, 0);
    const head = first.subarray(0, bytesRead);
    if (head[0] === 0x1f && head[1] === 0x8b) return await compressed(fh, 'gzip', path);
    if (head[0] === 0x28 && head[1] === 0xb5 && head[2] === 0x2f && head[3] === 0xfd)
      return await compressed(fh, 'zstd', path);
    const h = parseBlendHeader(head);
    if (!h) throw notBlend(path);
    return h;
  } finally {
    await fh.close();
  }
}

function notBlend(path: string): BlendHeaderError {
  return new BlendHeaderError(`${path.split('/').pop()} is not a Blender file (its first bytes are no .blend header)`);
}

async function compressed(
  fh: import('node:fs/promises').FileHandle,
  kind: 'gzip' | 'zstd',
  path: string,
): Promise<BlendHeader> {
  const out: Uint8Array[] = [];
  let have = 0;
  const take = (chunk: Uint8Array) => {
    out.push(chunk);
    have += chunk.length;
  };
  const feed = kind === 'zstd' ? zstdFeeder(take) : gzipFeeder(take);
  const buf = Buffer.alloc(64 * 1024);
  let pos = 0;
  try {
    while (have < HEADER_BYTES && pos < MAX_COMPRESSED_READ) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      await feed(buf.subarray(0, bytesRead), false);
    }
  } catch {
    throw new BlendHeaderError(
      `${path.split('/').pop()} is a damaged compressed .blend (${kind} data does not decompress)`,
    );
  }
  const h = parseBlendHeader(Buffer.concat(out), kind);
  if (!h) throw notBlend(path);
  return h;
}

type Feeder = (chunk: Uint8Array, last: boolean) => Promise<void>;

function zstdFeeder(take: (c: Uint8Array) => void): Feeder {
  const d = new Decompress((chunk) => take(chunk));
  return async (chunk, last) => d.push(new Uint8Array(chunk), last);
}

function gzipFeeder(take: (c: Uint8Array) => void): Feeder {
  const z = createGunzip();
  let failed: Error | undefined;
  z.on('data', (c: Buffer) => take(c));
  z.on('error', (e) => (failed = e));
  return (chunk) =>
    new Promise((resolve, reject) => {
      z.write(chunk, () => (failed ? reject(failed) : resolve()));
    });
}
