// The packing fixture (test/fixtures/blend/build_pack_project.py): a project whose .blend uses
// absolute paths, a missing file, an image sequence, UDIM tiles and a library linked by absolute
// path, whose own data uses a library-relative path, an absolute one and a relative one leading
// out of the project. Built in the caller's folder (absolute paths point there,
// so it cannot be shared through a cache), plus the archive layout the packer makes of it, by hand,
// and the pixels a render of it shows.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { CollectedDependency } from '../../shared/pack/dependencies.js';
import { EXTERNAL_DIR, PACK_MANIFEST_NAME, type PackManifest } from '../../shared/pack/manifest.js';
import type { RequestedConfig } from '../../shared/api/render-config.js';
import { resolveFinalConfig } from '../../service/domain/final-config.js';
import type { SceneAnalysis } from '../../blender/analysis/analyze-scene.js';
import { type BlenderRunResult, runBlender } from '../../blender/run.js';
import { capabilitiesFor } from '../../service/worker/runtime/devices.js';
import { renderInvocation } from '../../blender/render/render-invocation.js';
import { renderSettingsFrom } from '../../blender/render/render-settings.js';

const run = promisify(execFile);
const CAPS = capabilitiesFor(
  {
    version: '3.4.1',
    capabilities: { hasOpenImageDenoise: false, cyclesBackends: ['CUDA', 'HIP'], precompiledKernels: [] },
  },
  { gpus: [] },
);
const SCRIPT = fileURLToPath(new URL('../fixtures/blend/build_pack_project.py', import.meta.url));

export interface PackProject {
  /** The folder holding `proj/`, `assets/` and `shared/` (a real path). */
  root: string;
  /** The project folder, `root/proj`. */
  proj: string;
  /** `proj/scenes/main.blend`. */
  main: string;
  /** `proj/libs/props.blend`, linked from main by its absolute path. */
  library: string;
}

/** Builds the fixture into `dir` (created when missing). About 2 s of Blender. */
export async function buildPackProject(
  dir: string,
  blender = process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender',
): Promise<PackProject> {
  await mkdir(dir, { recursive: true });
  const root = await realpath(dir);
  const res = await runBlender({ binary: blender, pythonScript: SCRIPT, scriptArgs: [root], timeoutMs: 120_000 });
  if (res.exitCode !== 0)
    throw new Error(`building the pack fixture failed (exit ${res.exitCode}):\n${res.lastLines.join('\n')}`);
  const proj = path.join(root, 'proj');
  return { root, proj, main: path.join(proj, 'scenes', 'main.blend'), library: path.join(proj, 'libs', 'props.blend') };
}

/**
 * Every external file of the fixture, its own and its linked library's, as the add-on's collector lists them (in no
 * order): kind, pattern, files, holding .blend and users. Nothing packed, generated or built in.
 */
export function collectedDependencies(p: PackProject): CollectedDependency[] {
  const { proj, root, main, library } = p;
  const dep = (
    d: Partial<CollectedDependency> & Pick<CollectedDependency, 'path' | 'absolute' | 'usedBy'>,
  ): CollectedDependency => ({ kind: 'image', pattern: 'file', blendFile: main, ...d });
  const seq = [1, 2, 3, 4, 5].map((i) => path.join(proj, 'seq', `frame_000${i}.png`));
  return [
    dep({
      path: path.join(root, 'assets', 'abs_red.png'),
      absolute: path.join(root, 'assets', 'abs_red.png'),
      usedBy: ['IMabs_red.png'],
    }),
    dep({
      path: '//../seq/frame_0001.png',
      absolute: seq[0]!,
      pattern: 'sequence',
      files: seq,
      usedBy: ['IMframe_0001.png'],
    }),
    dep({
      path: '//../textures/missing.png',
      absolute: path.join(proj, 'textures', 'missing.png'),
      usedBy: ['IMmissing.png'],
    }),
    dep({
      path: '//../textures/tile.<UDIM>.png',
      absolute: path.join(proj, 'textures', 'tile.<UDIM>.png'),
      pattern: 'udim',
      files: [path.join(proj, 'textures', 'tile.1001.png'), path.join(proj, 'textures', 'tile.1002.png')],
      usedBy: ['IMtile.png'],
    }),
    dep({ path: '//../textures/wood.png', absolute: path.join(proj, 'textures', 'wood.png'), usedBy: ['IMwood.png'] }),
    // The library's own data: `//` is the library's folder, and the library is the holding file.
    dep({
      path: path.join(root, 'assets', 'lib_abs.png'),
      absolute: path.join(root, 'assets', 'lib_abs.png'),
      blendFile: library,
      usedBy: ['IMlib_abs.png'],
    }),
    dep({
      path: '//tex/prop.png',
      absolute: path.join(proj, 'libs', 'tex', 'prop.png'),
      blendFile: library,
      usedBy: ['IMprop.png'],
    }),
    dep({
      path: '//../../shared/outside.png',
      absolute: path.join(root, 'shared', 'outside.png'),
      blendFile: library,
      usedBy: ['IMoutside.png'],
    }),
    dep({ path: library, absolute: library, kind: 'library', usedBy: ['LIprops.blend'] }),
  ];
}

/** Where the packer puts a file from outside the project: `_external/<absolute path without its leading />`. */
export function externalPath(abs: string): string {
  return `${EXTERNAL_DIR}/${abs.replace(/^\/+/, '')}`;
}

/**
 * Lays the fixture out in `dest` as the packer would, with `proj/` as the project root: project
 * files keep their place, the others go under `_external/`, and the manifest lists a remap for
 * every path that would not resolve by itself (and the missing file). Returns the manifest.
 */
export async function layOutByHand(p: PackProject, dest: string): Promise<PackManifest> {
  const inProject = [
    'scenes/main.blend',
    'libs/props.blend',
    'libs/tex/prop.png',
    'textures/wood.png',
    'textures/tile.1001.png',
    'textures/tile.1002.png',
  ];
  for (let i = 1; i <= 5; i++) inProject.push(`seq/frame_000${i}.png`);
  const outside = ['assets/abs_red.png', 'assets/lib_abs.png', 'shared/outside.png'].map((f) => path.join(p.root, f));
  const copies: Array<[string, string]> = [
    ...inProject.map((f): [string, string] => [path.join(p.proj, f), f]),
    ...outside.map((abs): [string, string] => [abs, externalPath(abs)]),
  ];
  for (const [from, to] of copies) {
    await mkdir(path.dirname(path.join(dest, to)), { recursive: true });
    await copyFile(from, path.join(dest, to));
  }
  const [absRed, libAbs, shared] = outside as [string, string, string];
  const manifest: PackManifest = {
    version: 1,
    sceneFile: 'scenes/main.blend',
    addons: [],
    entries: [],
    remaps: [
      { from: absRed, to: externalPath(absRed), blendFile: 'scenes/main.blend' },
      { from: p.library, to: 'libs/props.blend', blendFile: 'scenes/main.blend' },
      { from: libAbs, to: externalPath(libAbs), blendFile: 'libs/props.blend' },
      { from: '//../../shared/outside.png', to: externalPath(shared), blendFile: 'libs/props.blend' },
    ],
    missing: [
      {
        path: '//../textures/missing.png',
        resolved: path.join(p.proj, 'textures', 'missing.png'),
        kind: 'image',
        usedBy: ['IMmissing.png'],
      },
    ],
    createdBy: 'test/helpers/pack-fixture.ts',
  };
  await writeFile(path.join(dest, PACK_MANIFEST_NAME), JSON.stringify(manifest));
  return manifest;
}

type Rgb = [number, number, number];

/** Centre pixel (64x48 frame) and colour of each cell of the fixture's grid; `missing` renders magenta. */
export const CELLS: Record<string, { x: number; y: number; rgb: Rgb }> = {
  absRed: { x: 8, y: 12, rgb: [255, 0, 0] },
  wood: { x: 24, y: 12, rgb: [0, 0, 255] },
  missing: { x: 40, y: 12, rgb: [255, 0, 255] },
  outside: { x: 56, y: 12, rgb: [255, 255, 0] },
  seq: { x: 8, y: 36, rgb: [51, 51, 51] },
  udim1001: { x: 21, y: 36, rgb: [0, 255, 255] },
  udim1002: { x: 27, y: 36, rgb: [255, 255, 255] },
  prop: { x: 40, y: 36, rgb: [0, 255, 0] },
  propAbs: { x: 56, y: 36, rgb: [255, 128, 0] },
};

/** The RGB of every cell's centre in a rendered PNG (decoded by ffmpeg). */
export async function cellColours(png: string): Promise<Record<string, Rgb>> {
  const { stdout } = await run('ffmpeg', ['-v', 'error', '-i', png, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], {
    encoding: 'buffer',
    maxBuffer: 1 << 20,
  });
  const raw = stdout as unknown as Buffer;
  const width = 64;
  return Object.fromEntries(
    Object.entries(CELLS).map(([name, { x, y }]) => {
      const i = (y * width + x) * 3;
      return [name, [raw[i]!, raw[i + 1]!, raw[i + 2]!] as Rgb];
    }),
  );
}

/** Cells whose colour differs from the expected one by more than 3 in a channel (`{}` when all match). */
export function mismatches(colours: Record<string, Rgb>): Record<string, { got: Rgb; want: Rgb }> {
  const out: Record<string, { got: Rgb; want: Rgb }> = {};
  for (const [name, { rgb }] of Object.entries(CELLS)) {
    const got = colours[name];
    if (!got || got.some((c, i) => Math.abs(c - rgb[i]!) > 3)) out[name] = { got: got ?? [-1, -1, -1], want: rgb };
  }
  return out;
}

export interface RenderedFrame {
  result: BlenderRunResult;
  lines: string[];
  /** The frame written (f_0001.png in the attempt folder). */
  png: string;
}

/**
 * Renders frame 1 of an unpacked project the way a render chunk does (finalConfig from the
 * analysis, render_setup.py with the manifest's remaps), into `workDir/render`.
 */
export async function renderFrameOne(opts: {
  root: string;
  sceneFile: string;
  remaps: PackManifest['remaps'];
  scene: SceneAnalysis;
  workDir: string;
}): Promise<RenderedFrame> {
  const requested: RequestedConfig = { colorManagementPreset: 'default', frameRanges: ['1'] };
  const { finalConfig } = resolveFinalConfig(opts.scene.output, { sceneToRender: 'Scene' }, requested, CAPS);
  const attemptDir = path.join(opts.workDir, 'render');
  const compositeDir = path.join(attemptDir, 'composite');
  await mkdir(compositeDir, { recursive: true });
  const settings = renderSettingsFrom(finalConfig, {
    compositeDir,
    requested,
    pathRemaps: { root: opts.root, remaps: opts.remaps },
  });
  const settingsFile = path.join(opts.workDir, 'settings.json');
  await writeFile(settingsFile, JSON.stringify(settings));
  const sceneFile = path.join(opts.root, ...opts.sceneFile.split('/'));
  const inv = renderInvocation({
    binary: process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender',
    sceneFile,
    sceneName: 'Scene',
    settingsFile,
    attemptDir,
    chunk: { start: 1, end: 1, step: 1 },
  });
  const lines: string[] = [];
  const result = await runBlender({ ...inv, cwd: attemptDir, timeoutMs: 120_000, onLine: (_s, l) => lines.push(l) });
  return { result, lines, png: path.join(attemptDir, 'f_0001.png') };
}
