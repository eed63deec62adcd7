// Store or deflate: deflating data that is already compressed costs CPU and gains nothing, so
// each file is judged from its name and its first bytes before it is streamed. Pure.
import { deflateRawSync } from 'node:zlib';

/** How many leading bytes of a file the decision looks at (and the sample deflated). */
export const SAMPLE_BYTES = 64 * 1024;

/** Extensions whose data is compressed by its format: stored without trying. */
const COMPRESSED_EXTENSIONS = new Set([
  'png',
  'jpg',
  'jpeg',
  'webp',
  'exr',
  'mp4',
  'mov',
  'mkv',
  'avi',
  'webm',
  'zip',
  'gz',
  'tgz',
  'bz2',
  'xz',
  'zst',
  '7z',
  'rar',
  'ogg',
  'mp3',
  'flac',
  'aac',
  'm4a',
  'opus',
  'vdb',
  'jp2',
  'heic',
  'avif',
  'usdz',
]);

/** Leading bytes of compressed containers (a .blend saved with compression is zstd or gzip). */
const COMPRESSED_MAGIC: readonly Buffer[] = [
  Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), // zstd
  Buffer.from([0x1f, 0x8b]), // gzip
  Buffer.from('PK\x03\x04', 'latin1'), // zip
  Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]), // 7z
  Buffer.from([0x89, 0x50, 0x4e, 0x47]), // png
  Buffer.from([0xff, 0xd8, 0xff]), // jpeg
];

/** Deflate only when the probe shrinks to at most this share of its size. */
const WORTH_IT = 0.9;
/** Leading bytes deflated to judge compressibility: enough to tell text and meshes from noise. */
const PROBE_BYTES = 16 * 1024;
// No upper bound: a file of zeros or a sparse cache deflates about 1000:1 and is deflated. The
// worker stops bombs by what they would write (a per-job quota), never by compression ratio.

export interface CompressionChoice {
  deflate: boolean;
  /** Why, for tests and traces. */
  reason: 'empty' | 'extension' | 'magic' | 'sample-incompressible' | 'sample-compressible';
}

function extension(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/**
 * Decides from the archive name and the first SAMPLE_BYTES of the file (the whole file when
 * shorter; empty means an empty file, stored).
 */
export function chooseCompression(name: string, sample: Buffer): CompressionChoice {
  if (sample.length === 0) return { deflate: false, reason: 'empty' };
  if (COMPRESSED_EXTENSIONS.has(extension(name))) return { deflate: false, reason: 'extension' };
  if (COMPRESSED_MAGIC.some((m) => sample.length >= m.length && sample.subarray(0, m.length).equals(m)))
    return { deflate: false, reason: 'magic' };
  // Level 1 on a small probe costs microseconds, which matters for projects of many small files.
  const probe = sample.subarray(0, PROBE_BYTES);
  if (deflateRawSync(probe, { level: 1 }).length > probe.length * WORTH_IT)
    return { deflate: false, reason: 'sample-incompressible' };
  return { deflate: true, reason: 'sample-compressible' };
}
