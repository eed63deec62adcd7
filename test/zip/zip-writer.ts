// A tiny ZIP writer for tests: writes exactly the bytes it is told to, including lies (wrong
// sizes, wrong CRC, hostile names, symlink/fifo modes, the encryption flag), which real zip
// tools refuse to produce.
import { crc32, deflateRawSync } from 'node:zlib';

export interface RawEntry {
  name: string | Buffer;
  data?: Buffer | string;
  /** 0 = stored, 8 = deflated. Default 8. */
  method?: 0 | 8;
  /**
   * Unix mode (type and permission bits) stored in the high 16 bits of the external attributes. Default 0o100644
   * (0o040755 for names ending in /).
   */
  mode?: number;
  /** General purpose flags; bit 0 = encrypted, bit 11 = UTF-8 names. Default 0x800. */
  flags?: number;
  /** Overrides of the sizes and CRC written in both headers. */
  declaredSize?: number;
  declaredCompressedSize?: number;
  declaredCrc?: number;
  /** Extra fields, written as given in both headers. Default none. */
  extra?: Buffer;
}

/** Builds a ZIP file; `entryCount` overrides the count in the end record. */
export function buildZip(entries: readonly RawEntry[], opts: { entryCount?: number } = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = typeof e.name === 'string' ? Buffer.from(e.name, 'utf8') : e.name;
    const data = typeof e.data === 'string' ? Buffer.from(e.data) : (e.data ?? Buffer.alloc(0));
    const method = e.method ?? 8;
    const body = method === 8 ? deflateRawSync(data) : data;
    const crc = e.declaredCrc ?? crc32(data);
    const size = e.declaredSize ?? data.length;
    const csize = e.declaredCompressedSize ?? body.length;
    const flags = e.flags ?? 0x800;
    const isDir = name.toString('utf8').endsWith('/');
    const mode = e.mode ?? (isDir ? 0o040755 : 0o100644);
    const extra = e.extra ?? Buffer.alloc(0);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x21, 12); // 1980-01-01
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(csize, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(extra.length, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(csize, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(extra.length, 30);
    central.writeUInt32LE(((mode << 16) | (isDir ? 0x10 : 0)) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, extra, body);
    centrals.push(central, name, extra);
    offset += local.length + name.length + extra.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  const count = opts.entryCount ?? entries.length;
  end.writeUInt16LE(count, 8);
  end.writeUInt16LE(count, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}
