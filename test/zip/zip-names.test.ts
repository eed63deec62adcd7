// Entry names without the UTF-8 flag (bit 11): macOS's own "Compress" writes UTF-8 names and
// leaves the flag clear. They are read as UTF-8 when their bytes are valid UTF-8, else as CP437,
// the same in the worker and in the daemon's preflight, as Info-ZIP's unzip lists them.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inspectZip } from '../../daemon/pack/preflight.js';
import { unpackSource } from '../../zip/unpack.js';
import { buildZip, type RawEntry } from './zip-writer.js';

let base: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'rb-zip-names-'));
  mkdirSync(join(base, 'job'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function writeZip(entries: RawEntry[]): string {
  const file = join(base, 'upload.zip');
  writeFileSync(file, buildZip(entries));
  return file;
}

/** Info-ZIP's listing of the archive's names (its last column), in a UTF-8 locale. */
function unzipList(file: string): string[] {
  const out = execFileSync('unzip', ['-Z1', file], { env: { ...process.env, LC_ALL: 'C.UTF-8' } }).toString('utf8');
  return out.split('\n').filter((l) => l !== '');
}

/** Info-ZIP unicode path extra field (0x7075): version 1, CRC-32 of the header's name, the UTF-8 name. */
function unicodePathField(headerName: Buffer, name: string): Buffer {
  const utf8 = Buffer.from(name, 'utf8');
  const field = Buffer.alloc(4 + 5 + utf8.length);
  field.writeUInt16LE(0x7075, 0);
  field.writeUInt16LE(5 + utf8.length, 2);
  field.writeUInt8(1, 4);
  field.writeUInt32LE(crc32(headerName) >>> 0, 5);
  utf8.copy(field, 9);
  return field;
}

const UTF8_NAMES = ['Szenen/Straße.blend', 'textures/café_ø.png', 'textures/日本/木.png'];

describe('entry names without the UTF-8 flag', () => {
  it('reads valid UTF-8 bytes as UTF-8 in the worker and the preflight, as unzip does', async () => {
    // flags 0: bit 11 clear, as macOS's Compress writes them; the name bytes are UTF-8.
    const file = writeZip(UTF8_NAMES.map((name) => ({ name, data: `data of ${name}`, flags: 0 })));
    expect(unzipList(file)).toEqual(UTF8_NAMES);
    const r = await unpackSource({ source: file, fileType: 'zip', jobDir: join(base, 'job') });
    expect(r.files).toEqual([...UTF8_NAMES].sort());
    const pre = await inspectZip(file);
    expect(pre.blendFiles).toEqual(['Szenen/Straße.blend']);
  });

  it('still reads bytes that are not UTF-8 as CP437', async () => {
    // 0x84 is "ä" in CP437 and a lone continuation byte in UTF-8.
    const cp437 = Buffer.concat([Buffer.from('sc'), Buffer.from([0x84]), Buffer.from('ne.blend')]);
    const file = writeZip([{ name: cp437, data: 'BLENDER', flags: 0 }]);
    const r = await unpackSource({ source: file, fileType: 'zip', jobDir: join(base, 'job') });
    expect(r.files).toEqual(['scäne.blend']);
    expect((await inspectZip(file)).blendFiles).toEqual(['scäne.blend']);
  });

  it('lets the Info-ZIP unicode path extra field win over the header name', async () => {
    const headerName = Buffer.from('SCENE~1.BLE');
    const file = writeZip([
      { name: headerName, data: 'BLENDER', flags: 0, extra: unicodePathField(headerName, 'Szene – final.blend') },
    ]);
    const r = await unpackSource({ source: file, fileType: 'zip', jobDir: join(base, 'job') });
    expect(r.files).toEqual(['Szene – final.blend']);
    expect((await inspectZip(file)).blendFiles).toEqual(['Szene – final.blend']);
  });

  it('keeps the flag authoritative when it is set', async () => {
    const file = writeZip([{ name: 'größe.blend', data: 'BLENDER', flags: 0x800 }]);
    const r = await unpackSource({ source: file, fileType: 'zip', jobDir: join(base, 'job') });
    expect(r.files).toEqual(['größe.blend']);
    expect((await inspectZip(file)).blendFiles).toEqual(['größe.blend']);
  });
});
