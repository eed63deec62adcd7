// The dependency trace (trace_deps.py running the add-on's collector) and the worker's path remaps
// (remap_paths.py, applied by analyze.py and render_setup.py) on every build of the matrix (3.4,
// 4.3, 5.2), with the pack fixture saved by that build: every external file listed as the packer
// needs it; then the project laid out as the packer would, its original tree moved away, analysed
// and rendered with the remaps: every texture found, the library loaded, each cell of the frame in
// its colour. Blender's own files (its bundled assets, its data files) are never dependencies.
import { mkdir, mkdtemp, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CollectedDependency } from '../../shared/pack/dependencies.js';
import type { PackManifest } from '../../shared/pack/manifest.js';
import { analyzeScene, type SceneAnalysis } from '../../blender/analysis/analyze-scene.js';
import { renderInvocation } from '../../blender/render/render-invocation.js';
import { renderSettingsFrom } from '../../blender/render/render-settings.js';
import { traceDependencies } from '../../blender/trace/trace-dependencies.js';
import { type BlenderRunResult, runBlender } from '../../blender/run.js';
import { type TestBuild, usableBuilds } from '../helpers/blender-builds.js';
import {
  cellColours,
  collectedDependencies,
  layOutByHand,
  mismatches,
  type PackProject,
} from '../helpers/pack-fixture.js';
import { finalOf, fixtureOf, pool, setupSummary, templateFiles } from './matrix.js';

const PACK_SCRIPT = fileURLToPath(new URL('../fixtures/blend/build_pack_project.py', import.meta.url));
let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-trace-matrix-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** The pack fixture saved by `build` into `dir` (its working folder: a build in a root writes nowhere else). */
async function packProject(build: TestBuild, dir: string): Promise<PackProject> {
  await mkdir(dir, { recursive: true });
  const root = await realpath(dir);
  const res = await runBlender({
    binary: build.path,
    pythonScript: PACK_SCRIPT,
    scriptArgs: [root],
    cwd: root,
    timeoutMs: 180_000,
  });
  if (res.exitCode !== 0)
    throw new Error(
      `building the pack fixture on ${build.minor} failed (exit ${res.exitCode}):\n${res.lastLines.join('\n')}`,
    );
  const proj = join(root, 'proj');
  return { root, proj, main: join(proj, 'scenes', 'main.blend'), library: join(proj, 'libs', 'props.blend') };
}

/** Frame 1 of the unpacked project as a render chunk does it: final config from the analysis, the manifest's remaps. */
async function renderRemapped(
  build: TestBuild,
  jobDir: string,
  root: string,
  remaps: PackManifest['remaps'],
  scene: SceneAnalysis,
): Promise<{ result: BlenderRunResult; lines: string[]; png: string }> {
  const final = finalOf(scene.output, build, '1');
  const attemptDir = join(jobDir, 'render');
  const compositeDir = join(attemptDir, 'composite');
  await mkdir(compositeDir, { recursive: true });
  const settingsFile = join(jobDir, 'settings.json');
  await writeFile(
    settingsFile,
    JSON.stringify(renderSettingsFrom(final, { compositeDir, pathRemaps: { root, remaps } })),
  );
  const inv = renderInvocation({
    binary: build.path,
    sceneFile: join(root, 'scenes', 'main.blend'),
    sceneName: 'Scene',
    settingsFile,
    attemptDir,
    chunk: { start: 1, end: 1, step: 1 },
    jobDir,
  });
  const lines: string[] = [];
  const result = await runBlender({ ...inv, cwd: attemptDir, timeoutMs: 180_000, onLine: (_s, l) => lines.push(l) });
  return { result, lines, png: join(attemptDir, 'f_0001.png') };
}

describe.each(usableBuilds('trace matrix').map((b) => [b.minor, b] as const))(
  'dependency trace and path remaps on Blender %s',
  (_minor, build) => {
    let p: PackProject;
    let traced: CollectedDependency[];
    let assets: CollectedDependency[];
    let assetsFile: string;
    let template: CollectedDependency[];
    let withRemaps: SceneAnalysis;
    let render: Awaited<ReturnType<typeof renderRemapped>>;
    let manifest: PackManifest;

    beforeAll(async () => {
      const base = join(work, build.minor);
      p = await packProject(build, join(base, 'src'));
      const twoD = templateFiles(build).find((t) => t.includes('/2D_Animation/'))!;
      assetsFile = await fixtureOf('blender-assets', build);
      const lists = await pool(
        [p.main, assetsFile, twoD].map(
          (file) => () => traceDependencies({ blender: build.path, file, timeoutMs: 120_000 }),
        ),
      );
      [traced, assets, template] = [lists[0]!, lists[1]!, lists[2]!];
      // The packer's layout of the project, then the original tree moved away: its absolute paths lead nowhere.
      const jobDir = join(base, 'job');
      const root = join(jobDir, 'project');
      manifest = await layOutByHand(p, root);
      await rename(join(base, 'src'), join(base, 'src-moved'));
      withRemaps = await analyzeScene({
        blender: build.path,
        file: join(root, 'scenes', 'main.blend'),
        workDir: jobDir,
        timeoutMs: 120_000,
        pathRemaps: { root, remaps: manifest.remaps },
      });
      render = await renderRemapped(build, jobDir, root, manifest.remaps, withRemaps);
    }, 600_000);

    it('lists every external file of the main file and its linked library, as the packer needs them', () => {
      const byPath = (a: CollectedDependency, b: CollectedDependency) => a.path.localeCompare(b.path);
      expect([...traced].sort(byPath)).toEqual(collectedDependencies(p).sort(byPath));
    });

    it(
      "never lists Blender's own files: another installation's bundled assets, this build's data files, its " +
        "templates' Essentials",
      () => {
        expect(assets.map((d) => [d.kind, d.path])).toEqual([['image', '//textures/gone.png']]);
        expect(assets[0]).toMatchObject({ blendFile: assetsFile, usedBy: ['IMGone'] });
        // The 2D Animation template links Blender's Essentials brushes on 5.x: from its own installation.
        expect(template).toEqual([]);
      },
    );

    it(
      'analysis with the remaps finds every moved file and loads the library; only the missing texture is ' + 'missing',
      () => {
        expect(withRemaps.remap).toEqual({ remapped: 4, failed: [], unused: 0 });
        expect(withRemaps.warnings.map((w) => w.code)).not.toContain('MISSING_LIBRARIES');
        expect(withRemaps.warnings.map((w) => w.code)).not.toContain('ANALYSIS_SECTION_FAILED');
        expect(withRemaps.output.missingFiles).toEqual([['Image', 'missing.png', '//../textures/missing.png']]);
        expect(withRemaps.output.linkedData?.map((l) => l.path)).toEqual(['//../libs/props.blend']);
      },
    );

    it('the render with the remaps shows every texture in its cell (the missing one magenta)', async () => {
      expect(render.result.exitCode, render.result.lastLines.join('\n')).toBe(0);
      expect(setupSummary(render.lines).remappedPaths).toBe(4);
      expect(mismatches(await cellColours(render.png))).toEqual({});
    });
  },
);
