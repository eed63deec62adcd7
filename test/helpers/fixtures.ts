// Builds the Blender fixtures of test/fixtures/blend on demand (they are never committed) into a
// cache folder under the OS temp dir, keyed by a hash of the builder scripts and arguments, so the
// test files of one run (and later runs) share them. Safe when several vitest workers build the same
// fixture at once: each builds under a temporary name and renames it into place atomically.
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runBlender } from '../../blender/run.js';

export type FixtureName =
  | 'basic'
  | 'compositor'
  | 'stereo'
  | 'missing-texture'
  | 'autoexec'
  | 'denoise'
  | 'odd'
  | 'addon-nodes'
  | 'addon-sun'
  | 'shadowed-camera'
  | 'monkeys'
  | 'growing'
  | 'heavy';

/** Every fixture; see the header of each test/fixtures/blend/build_NAME.py for what it holds. */
export const FIXTURE_NAMES: readonly FixtureName[] = [
  'basic',
  'compositor',
  'stereo',
  'missing-texture',
  'autoexec',
  'denoise',
  'odd',
  'addon-nodes',
  'addon-sun',
  'shadowed-camera',
  'monkeys',
  'growing',
  'heavy',
];

const SCRIPTS_DIR = fileURLToPath(new URL('../fixtures/blend/', import.meta.url));

export interface BuildFixtureOptions {
  /**
   * The Blender build that saves it (an executable or a root folder). Default
   * `$RENDERBRIDGE_TEST_BLENDER` or `blender`.
   */
  blender?: string;
  /** Builder arguments after OUT.blend. Default none; for `autoexec`, the marker path of fixtureMarker(). */
  args?: readonly string[];
  /** Build timeout. Default 120000 ms. */
  timeoutMs?: number;
}

function scriptPath(name: FixtureName): string {
  return join(SCRIPTS_DIR, `build_${name.replace(/-/g, '_')}.py`);
}

/**
 * The cache folder of one fixture: a hash of its builder, the shared module, the explicit arguments
 * and the Blender that saves it (a file saved by 5.2 is another file than one saved by 3.4).
 */
export function fixtureDir(name: FixtureName, args?: readonly string[], blender?: string): string {
  const h = createHash('sha256');
  h.update(readFileSync(join(SCRIPTS_DIR, '_common.py')));
  h.update(readFileSync(scriptPath(name)));
  h.update(JSON.stringify(args ?? null));
  // The default build keeps the key it always had; any other build is part of it.
  const build = blender ?? process.env.RENDERBRIDGE_TEST_BLENDER;
  if (build && build !== 'blender') h.update(`\0${build}`);
  return join(tmpdir(), `renderbridge-fixtures-${h.digest('hex').slice(0, 16)}`);
}

/** Where the default `autoexec` fixture's scripts would write (the text block; `.driver` for the driver). */
export function fixtureMarker(): string {
  return join(fixtureDir('autoexec'), 'autoexec.marker');
}

/** Path of the built fixture `NAME.blend`, building it first when the cache lacks it. */
export async function buildFixture(name: FixtureName, opts: BuildFixtureOptions = {}): Promise<string> {
  const dir = fixtureDir(name, opts.args, opts.blender);
  const target = join(dir, `${name}.blend`);
  if (existsSync(target)) return target;
  await mkdir(dir, { recursive: true });
  const args = opts.args ?? (name === 'autoexec' ? [fixtureMarker()] : []);
  const tmp = join(dir, `${name}.${process.pid}.${randomUUID().slice(0, 8)}.tmp.blend`);
  const res = await runBlender({
    binary: opts.blender ?? process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender',
    pythonScript: scriptPath(name),
    scriptArgs: [tmp, ...args],
    // The fixture's folder: the only one a build in a root may write.
    cwd: dir,
    timeoutMs: opts.timeoutMs ?? 120_000,
  });
  if (res.exitCode !== 0 || !existsSync(tmp)) {
    await rm(tmp, { force: true });
    throw new Error(`building fixture ${name} failed (exit ${res.exitCode}):\n${res.lastLines.join('\n')}`);
  }
  await rename(tmp, target);
  return target;
}

/** The part of archiver 8's ZipArchive used here (archiver ships no type declarations). */
interface ZipArchive extends Readable {
  file(path: string, data: { name: string }): this;
  finalize(): Promise<void>;
}

/**
 * Writes a zip at `out` holding the named fixtures as `prefix/NAME.blend` (prefix default `project`).
 * Returns the entry names, in order.
 */
export async function buildFixtureZip(
  names: readonly FixtureName[],
  out: string,
  prefix = 'project',
): Promise<string[]> {
  const paths = await Promise.all(names.map((n) => buildFixture(n)));
  const specifier: string = 'archiver'; // a variable keeps tsc from looking for declarations archiver lacks
  const { ZipArchive } = (await import(specifier)) as {
    ZipArchive: new (o: { zlib?: { level: number } }) => ZipArchive;
  };
  const zip = new ZipArchive({ zlib: { level: 1 } });
  const entries = paths.map((p) => `${prefix}/${basename(p)}`);
  paths.forEach((p, i) => zip.file(p, { name: entries[i]! }));
  const done = pipeline(zip, createWriteStream(out));
  await zip.finalize();
  await done;
  return entries;
}

/**
 * The `shadowed-camera` scene zipped as a project with the library holding its camera
 * (shot/scene.blend + shot/shot-lib.blend, see build_shadowed_camera.py), written into `dir`:
 * Blender validates it, then errors out on the camera when it renders.
 */
export async function shadowedCameraZip(dir: string): Promise<string> {
  const scene = await buildFixture('shadowed-camera');
  const zip = join(dir, 'shadowed-camera.zip');
  const script = [
    'import os, sys, zipfile',
    'with zipfile.ZipFile(sys.argv[1], "w") as z:',
    '    z.write(sys.argv[2], "shot/scene.blend")',
    '    z.write(os.path.join(os.path.dirname(sys.argv[2]), "shot-lib.blend"), "shot/shot-lib.blend")',
  ].join('\n');
  await promisify(execFile)('python3', ['-c', script, zip, scene]);
  return zip;
}
