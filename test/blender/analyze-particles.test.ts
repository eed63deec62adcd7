// The analysis-only memory estimate (vramMetadata) of particle systems (blender/analysis/
// analyze_particles.py), on scenes test/fixtures/blend/build_particles.py builds in each build of
// the Blender matrix, against what Blender itself counts and reports:
//   - hair with interpolated children: the strands that render are the children at their render
//     amount (not the viewport's), with 2^render_step segments each;
//   - instances of a baked emitter: only the particles alive at once render (not every particle ever
//     born), and the baked cache, which Blender holds in memory whatever frame renders, is counted.
// On 3.4 the estimate must hold the reported peak (RAM, Blender's `Mem: ... (Peak ...)`) of the
// heaviest frame within 15 % and inside its band: before the particle model it was -55 % (hair) and
// -39 % (instances). 4.3 and 5.2 count the same strands and instances; 5.x prints no such peak (its
// one `Mem:` field is Cycles' alone), so the figure is checked against Blender's only on 3.4.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeScene, type SceneAnalysis } from '../../blender/analysis/analyze-scene.js';
import { runBlender } from '../../blender/run.js';
import { usableBuilds, type TestBuild } from '../helpers/blender-builds.js';

const BUILDER = fileURLToPath(new URL('../fixtures/blend/build_particles.py', import.meta.url));
type Kind = 'hair' | 'instances';
interface Facts {
  strands?: number;
  keys?: number;
  peakAlive?: number;
  peakFrame?: number;
  cacheInfo?: string;
}
interface Scene {
  file: string;
  facts: Facts;
  analysis: SceneAnalysis;
}

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-analyze-particles-'));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** Builds the scene of `kind` in `build` (a file its own Blender saved), then analyses it there. */
async function sceneOf(build: TestBuild, kind: Kind): Promise<Scene> {
  const dir = join(work, build.minor, kind);
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${kind}.blend`);
  const built = await runBlender({
    binary: build.path,
    pythonScript: BUILDER,
    scriptArgs: [file, kind],
    cwd: dir,
    timeoutMs: 180_000,
  });
  expect(built.exitCode, built.lastLines.join('\n')).toBe(0);
  const facts = JSON.parse(await readFile(`${file}.json`, 'utf8')) as Facts;
  const analysis = await analyzeScene({ blender: build.path, file, workDir: dir, timeoutMs: 180_000 });
  return { file, facts, analysis };
}

/** The peak Blender 3.x prints while it renders `frame` (`Mem:... (Peak N.NNM)`: its RAM), bytes. */
async function reportedPeak(build: TestBuild, scene: Scene, frame: number): Promise<number> {
  const lines: string[] = [];
  const dir = join(work, build.minor, 'render');
  await mkdir(dir, { recursive: true });
  const res = await runBlender({
    binary: build.path,
    file: scene.file,
    args: ['-o', join(dir, 'f_####'), '-F', 'PNG', '-f', String(frame)],
    cwd: dir,
    timeoutMs: 180_000,
    onLine: (_s, l) => lines.push(l),
  });
  expect(res.exitCode, lines.slice(-30).join('\n')).toBe(0);
  const peaks = lines.flatMap((l) => [...l.matchAll(/Peak ([\d.]+)M/g)].map((m) => Number(m[1]) * 2 ** 20));
  expect(peaks.length, lines.slice(-30).join('\n')).toBeGreaterThan(0);
  return Math.max(...peaks);
}

describe.each(usableBuilds('particle memory estimate'))('particle memory estimate on Blender $minor', (build) => {
  const scenes = new Map<Kind, Scene>();
  beforeAll(async () => {
    // One after the other: each is a Blender run, and the machine may be shared.
    for (const kind of ['hair', 'instances'] as const) scenes.set(kind, await sceneOf(build, kind));
  }, 600_000);

  it('counts the hair strands at the render amount of children, each with its render steps', () => {
    const { facts, analysis } = scenes.get('hair')!;
    const v = analysis.output.vramMetadata!;
    expect(v.riskFeatures.hasHairOrParticles).toBe(true);
    // 1,000 parents x 100 children at render (2 in the viewport), 2^3 segments each.
    expect(facts).toEqual({ strands: 100_000, keys: 9 });
    expect(v.geometry.hairSegmentCount).toBe(facts.strands! * (facts.keys! - 1));
    expect(v.unsizedFeatures).toEqual([]);
  });

  it('counts the instances alive at once and the baked cache, not every particle ever born', () => {
    const { facts, analysis } = scenes.get('instances')!;
    const v = analysis.output.vramMetadata!;
    // 10,000 born over 99 frames, each living 30: about 3,030 at once, as Blender counted them.
    expect(Math.abs(v.geometry.particleInstanceCount! - facts.peakAlive!)).toBeLessThanOrEqual(facts.peakAlive! * 0.02);
    expect(facts.cacheInfo).toMatch(/^100 frames in memory \(/);
    // The geometry holds the cache Blender reports (7.4 MiB on 3.4) besides the instances and meshes.
    const cached = Number(/\(([\d.]+) MiB\)/.exec(facts.cacheInfo!)![1]) * 2 ** 20;
    expect(v.geometry.estimatedBytes).toBeGreaterThan(cached + v.geometry.particleInstanceCount! * 500);
  });

  it.runIf(build.minor === '3.4')(
    "holds each scene's reported peak within 15 % and inside its band",
    async () => {
      for (const [kind, scene] of scenes) {
        const v = scene.analysis.output.vramMetadata!;
        const peak = await reportedPeak(build, scene, scene.facts.peakFrame ?? 1);
        const error = v.estimatedBytes! / peak - 1;
        console.log(
          `${kind}: estimate ${(v.estimatedBytes! / 2 ** 20).toFixed(1)} MiB, peak ` +
            `${(peak / 2 ** 20).toFixed(1)} MiB (${(error * 100).toFixed(0)} %)`,
        );
        expect(Math.abs(error), kind).toBeLessThanOrEqual(0.15);
        expect(v.estimatedLowBytes!, kind).toBeLessThanOrEqual(peak);
        expect(peak, kind).toBeLessThanOrEqual(v.estimatedHighBytes!);
      }
    },
    600_000,
  );
});
