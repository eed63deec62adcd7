// The packer's file list for the content-addressed upload (sha256, size, compression of every
// file and the manifest written in the work folder), the hash cache that spares re-reading
// unchanged files (persisted in a file, checked through its own counters), and zip() on demand
// producing the archive packProject writes. Real files in temp folders throughout.
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DaemonError } from '../../daemon/errors.js';
import { HashCache } from '../../daemon/pack/hash-cache.js';
import { packProject } from '../../daemon/pack/pack-project.js';
import { createPacker } from '../../daemon/pack/packer.js';
import type { TraceFn } from '../../daemon/ports.js';
import type { PackRequest } from '../../shared/daemon/submission-schemas.js';
import { PackManifest } from '../../shared/pack/manifest.js';
import { dep, put, readZip, sha256, textBytes } from './pack-helpers.js';

// Every request here lists its dependencies: a trace would be a bug.
const noTrace: TraceFn = () => Promise.reject(new Error('the packer traced although the dependencies were given'));

let base: string;
let proj: string;
let workDir: string;
let main: string;
let files: Record<'wood' | 'notes' | 'noise' | 'lib', string>;

/** An hour ago: older than the cache's 2-second window for files that may still be changing. */
const past = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'rb-pack-files-'));
  proj = join(base, 'proj');
  workDir = join(base, 'work');
  main = put(join(proj, 'shots', 'sh010.blend'), Buffer.concat([Buffer.from('BLENDER-v304'), textBytes(300_000)]));
  files = {
    wood: put(join(proj, 'tex', 'wood.png'), randomBytes(200_000)),
    notes: put(join(proj, 'shots', 'notes.txt'), textBytes(80_000, 7)),
    noise: put(join(proj, 'shots', 'noise.bin'), randomBytes(150_000)),
    lib: put(join(proj, 'libs', 'props.blend'), gzipSync(textBytes(400_000, 3))),
  };
  for (const f of [main, ...Object.values(files)]) utimesSync(f, past(60), past(60));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function request(): PackRequest {
  return {
    path: main,
    dependencies: [
      dep({ path: '//../tex/wood.png', absolute: files.wood, kind: 'image', blendFile: main }),
      dep({ path: '//notes.txt', absolute: files.notes, kind: 'text', blendFile: main }),
      dep({ path: '//noise.bin', absolute: files.noise, kind: 'other', blendFile: main }),
      dep({ path: '//../libs/props.blend', absolute: files.lib, kind: 'library', blendFile: main }),
    ],
  };
}

describe('the packed file list', () => {
  it('lists every file with its sha256, size and compression, and the manifest in the work folder', async () => {
    const packer = createPacker({ workDir, trace: noTrace, createdBy: 'renderbridge-daemon/test' });
    const phases = new Set<string>();
    const pack = await packer.pack(request(), { onProgress: (_d, _t, phase) => phases.add(phase) });
    expect([...phases]).toEqual(['hashing']);
    expect(pack.zipPath).toBeNull();
    expect(pack.sceneFile).toBe('shots/sh010.blend');
    const manifestPath = join(workDir, pack.packId, 'renderbridge-manifest.json');
    const rows = pack.files.map((f) => [f.path, f.source, f.compression]);
    expect(rows).toEqual([
      ['libs/props.blend', files.lib, 'none'], // a compressed .blend (gzip magic)
      ['shots/noise.bin', files.noise, 'none'], // noise does not shrink
      ['shots/notes.txt', files.notes, 'gzip'],
      ['shots/sh010.blend', main, 'gzip'], // an uncompressed .blend
      ['tex/wood.png', files.wood, 'none'], // an image format is compressed already
      ['renderbridge-manifest.json', manifestPath, 'gzip'],
    ]);
    for (const f of pack.files)
      expect([f.path, f.sha256, f.size]).toEqual([f.path, sha256(f.source), readFileSync(f.source).length]);
    expect(pack.bytes).toBe(pack.files.reduce((n, f) => n + f.size, 0));
    expect(pack.fileCount).toBe(5);

    const manifest = PackManifest.parse(JSON.parse(readFileSync(manifestPath, 'utf8')));
    expect(manifest).toMatchObject({
      sceneFile: 'shots/sh010.blend',
      createdBy: 'renderbridge-daemon/test',
      missing: [],
    });
    expect(manifest.entries.map((e) => [e.path, e.sha256, e.size, e.deflated])).toEqual(
      pack.files.slice(0, -1).map((f) => [f.path, f.sha256, f.size, f.compression === 'gzip']),
    );
    expect(pack.remaps).toEqual(manifest.remaps);
    expect(pack.preflight).toEqual({
      schemaVersion: 1,
      source: 'client_zip_inspection',
      blendFiles: ['libs/props.blend', 'shots/sh010.blend'],
      packerManifestPreview: { manifestPath: 'renderbridge-manifest.json', bundledAddons: [] },
    });
  });

  it('zips on demand the archive packProject writes, with the very manifest of the file list', async () => {
    const packer = createPacker({ workDir, trace: noTrace, createdBy: 'renderbridge-daemon/test' });
    const pack = await packer.pack(request());
    const seen: [number, number, string][] = [];
    const [a, b] = await Promise.all([
      packer.zip(pack.packId, { onProgress: (d, t, p) => seen.push([d, t, p]) }),
      packer.zip(pack.packId),
    ]);
    expect(a).toBe(b); // one zip, whoever asks
    expect(seen.at(-1)).toEqual([
      pack.bytes - pack.files.at(-1)!.size,
      pack.bytes - pack.files.at(-1)!.size,
      'zipping',
    ]);
    const direct = await packProject(
      { blendFile: main, dependencies: request().dependencies! },
      { zipPath: join(base, 'direct.zip'), createdBy: 'renderbridge-daemon/test' },
    );
    const onDemand = readZip(a);
    const before = readZip(direct.zipPath);
    expect(onDemand.entries).toEqual(before.entries);
    expect(onDemand.manifest).toEqual(before.manifest);
    expect(readFileSync(join(workDir, pack.packId, 'renderbridge-manifest.json'), 'utf8')).toBe(
      JSON.stringify(onDemand.manifest, null, 1) + '\n',
    );
    expect(packer.get(pack.packId)?.zipPath).toBe(a);
  });

  it('refuses to zip a file that changed after it was hashed, and leaves no zip behind', async () => {
    const packer = createPacker({ workDir, trace: noTrace, createdBy: 'test' });
    const pack = await packer.pack(request());
    put(files.notes, textBytes(80_000, 99));
    // PACK_CHANGED, as over the blob upload: the submission says to pack again.
    const err = (await packer.zip(pack.packId).catch((e: unknown) => e)) as DaemonError;
    expect(err).toBeInstanceOf(DaemonError);
    expect(err.code).toBe('PACK_CHANGED');
    expect(err.message).toContain(files.notes);
    expect(err.message).toContain('pack again');
    expect(readdirSync(workDir)).toEqual([pack.packId]);
  });

  it('discard removes the manifest folder and the zip', async () => {
    const packer = createPacker({ workDir, trace: noTrace, createdBy: 'test' });
    const pack = await packer.pack(request());
    await packer.zip(pack.packId);
    await packer.discard(pack.packId);
    expect(readdirSync(workDir)).toEqual([]);
  });
});

describe('the hash cache', () => {
  const cacheFile = () => join(base, 'state', 'hash-cache.json');

  it(
    'reads only files whose size, mtime or inode changed, across packers (the cache file), and rehashes a file ' +
      'changed in place',
    async () => {
      const first = new HashCache({ file: cacheFile() });
      const one = await createPacker({ workDir, trace: noTrace, createdBy: 'test', hashCache: first }).pack(request());
      expect(first.stats()).toMatchObject({ hits: 0, misses: 5, entries: 5 });
      expect(statSync(cacheFile()).mode & 0o777).toBe(0o600);
      expect(readdirSync(join(base, 'state'))).toEqual(['hash-cache.json']); // no temporary file left

      // A new packer (a restarted daemon) with the cache read back from its file.
      const second = new HashCache({ file: cacheFile() });
      const two = await createPacker({ workDir, trace: noTrace, createdBy: 'test', hashCache: second }).pack(request());
      expect(second.stats()).toMatchObject({ hits: 5, misses: 0 });
      expect(two.files.map((f) => [f.path, f.sha256, f.compression])).toEqual(
        one.files.map((f) => [f.path, f.sha256, f.compression]),
      );

      // Same size, same inode, new bytes and a new (still old) mtime: read again.
      const inode = statSync(files.notes).ino;
      const fd = openSync(files.notes, 'r+');
      writeSync(fd, Buffer.from('CHANGED'), 0, 7, 100);
      closeSync(fd);
      utimesSync(files.notes, past(30), past(30));
      expect(statSync(files.notes)).toMatchObject({ ino: inode, size: 80_000 });
      const third = new HashCache({ file: cacheFile() });
      const three = await createPacker({ workDir, trace: noTrace, createdBy: 'test', hashCache: third }).pack(
        request(),
      );
      expect(third.stats()).toMatchObject({ hits: 4, misses: 1 });
      const notes = three.files.find((f) => f.path === 'shots/notes.txt')!;
      expect(notes.sha256).toBe(sha256(files.notes));
      expect(notes.sha256).not.toBe(one.files.find((f) => f.path === 'shots/notes.txt')!.sha256);
    },
  );

  it('does not keep a file modified in the last seconds (its mtime may not move on the next write)', async () => {
    const cache = new HashCache();
    const packer = createPacker({ workDir, trace: noTrace, createdBy: 'test', hashCache: cache });
    put(files.notes, textBytes(80_000, 5)); // mtime: now
    await packer.pack(request());
    await packer.pack(request());
    expect(cache.stats()).toMatchObject({ hits: 4, misses: 6 });
  });

  it('stays within its bound, dropping the least recently used, and survives a broken file', async () => {
    const file = cacheFile();
    put(file, '{"version": 1, "entries": '); // cut short: read as empty
    const cache = new HashCache({ file, maxEntries: 2 });
    await cache.load();
    const key = (p: string) => ({ path: p, size: 1, mtimeNs: 1n, identity: '1:1' });
    cache.set(key('/a'), { sha256: 'a', deflate: false });
    cache.set(key('/b'), { sha256: 'b', deflate: true });
    expect(cache.get(key('/a'))?.sha256).toBe('a'); // /a is now the most recently used
    cache.set(key('/c'), { sha256: 'c', deflate: false });
    expect(cache.stats().entries).toBe(2);
    expect(cache.get(key('/b'))).toBeUndefined();
    await cache.save();
    const again = new HashCache({ file });
    await again.load();
    expect([
      again.get(key('/a'))?.sha256,
      again.get(key('/c'))?.sha256,
      again.get({ ...key('/c'), identity: '1:2' }),
    ]).toEqual(['a', 'c', undefined]);
    expect(existsSync(`${file}.tmp`)).toBe(false);
  });
});
