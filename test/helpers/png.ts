// Reads a PNG's header and pixels, enough for tests to check size and that an image is not flat.
import { inflateSync } from 'node:zlib';

export function pngInfo(buf: Buffer): { width: number; height: number; bitDepth: number; colorType: number } {
  if (buf.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') throw new Error('not a PNG');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20), bitDepth: buf[24]!, colorType: buf[25]! };
}

/** Number of distinct byte values in the decompressed image data (filter bytes included): 1-2 means a flat image. */
export function pngDistinctBytes(buf: Buffer): number {
  const chunks: Buffer[] = [];
  for (let at = 8; at < buf.length;) {
    const len = buf.readUInt32BE(at);
    const type = buf.subarray(at + 4, at + 8).toString('latin1');
    if (type === 'IDAT') chunks.push(buf.subarray(at + 8, at + 8 + len));
    at += 12 + len;
  }
  return new Set(inflateSync(Buffer.concat(chunks))).size;
}
