// Helpers of the packer tests: project files on disk, and zips read back with Python's zipfile
// (a reader independent of the yauzl the daemon itself uses), CRCs checked.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { CollectedDependencyInput } from '../../shared/pack/dependencies.js';
import { CollectedDependency } from '../../shared/pack/dependencies.js';
import type { PackManifest } from '../../shared/pack/manifest.js';
import { expect } from 'vitest';
import { DaemonError } from '../../daemon/errors.js';
import type { ExpandedDependency } from '../../daemon/pack/layout.js';

/** ZIP compression methods. */
export const STORED = 0;
export const DEFLATED = 8;

export interface ReadEntry {
  name: string;
  method: number;
  size: number;
  /** Unix mode bits of the entry. */
  mode: number;
}

export interface ReadZip {
  entries: ReadEntry[];
  /** The parsed manifest, or null when the zip has none. */
  manifest: PackManifest | null;
}

const READER = `
import sys, json, zipfile
z = zipfile.ZipFile(sys.argv[1])
bad = z.testzip()
if bad is not None:
    sys.exit("bad CRC in " + bad)
names = z.namelist()
m = json.loads(z.read("renderbridge-manifest.json")) if "renderbridge-manifest.json" in names else None
print(json.dumps({"entries": [{"name": i.filename, "method": i.compress_type, "size": i.file_size, "mode": \
i.external_attr >> 16} for i in z.infolist()], "manifest": m}))
`;

/** Every entry of `zip` in archive order, and its manifest; fails when a CRC is wrong. */
export function readZip(zip: string): ReadZip {
  return JSON.parse(execFileSync('python3', ['-c', READER, zip], { encoding: 'utf8' })) as ReadZip;
}

/** Methods by entry name, read back with Python's zipfile (CRCs checked). */
export function zipMethods(zip: string): Record<string, number> {
  return Object.fromEntries(readZip(zip).entries.map((e) => [e.name, e.method]));
}

/** Writes `data` at `file`, creating its folders. Returns `file`. */
export function put(file: string, data: string | Buffer): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, data);
  return file;
}

export function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** Bytes that deflate well (text-like lines), deterministic. */
export function textBytes(size: number, seed = 1): Buffer {
  let s = '';
  for (let i = 0; s.length < size; i++)
    s += `v ${((i * 7919 + seed) % 1000) / 1000} ${((i * 104_729) % 997) / 997} ${(i % 13) / 13}\n`;
  return Buffer.from(s.slice(0, size));
}

/** A fresh temp folder `base` holding a project `proj` whose scene is `main` (shots/sh010.blend, 200 kB). */
export function scratchProject(): { base: string; proj: string; main: string } {
  const base = mkdtempSync(join(tmpdir(), 'rb-pack-'));
  const proj = join(base, 'proj');
  const main = put(
    join(proj, 'shots', 'sh010.blend'),
    Buffer.concat([Buffer.from('BLENDER-v304'), textBytes(200_000)]),
  );
  return { base, proj, main };
}

/** A dependency as the add-on's collector reports it (defaults applied by the shared schema). */
export function dep(d: CollectedDependencyInput): CollectedDependency {
  return CollectedDependency.parse(d);
}

/** The DaemonError a packing call failed with; the test fails unless it is PACK_FAILED. */
export async function packFailure(p: Promise<unknown>): Promise<DaemonError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DaemonError);
  expect((err as DaemonError).code).toBe('PACK_FAILED');
  return err as DaemonError;
}

/** A dependency whose files all exist (the file itself, or the given files for a pattern). */
export function found(d: CollectedDependencyInput, files?: string[]): ExpandedDependency {
  return { dep: dep(d), files: files ?? [d.absolute], missing: [] };
}

/** The DaemonError a layout call threw; the test fails unless it threw PACK_FAILED. */
export function layoutFailure(fn: () => unknown): DaemonError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DaemonError);
    expect((err as DaemonError).code).toBe('PACK_FAILED');
    return err as DaemonError;
  }
  throw new Error('expected PACK_FAILED');
}
