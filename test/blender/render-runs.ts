// Renders of a matrix fixture as the worker runs them, on one Blender build: the frames planned from
// the build's analysis and written to settings.json, then render_setup.py in a chunk (renderInvocation
// + runBlender, `-s -e -a`), alone (setup only), or in the warm loop (render_loop.py through
// warm-render.ts), with the lines each run printed. Shared by render-matrix.test.ts and
// render-warm.test.ts.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { FinalConfig } from '../../shared/api/analysis.js';
import { analyzeScene, type SceneAnalysis } from '../../blender/analysis/analyze-scene.js';
import { renderInvocation, renderSetupScriptPath } from '../../blender/render/render-invocation.js';
import { type RenderSettings, renderSettingsFrom } from '../../blender/render/render-settings.js';
import type { FrameRun } from '../../blender/render/warm-process.js';
import { type BlenderRunResult, runBlender } from '../../blender/run.js';
import { filesOfFrame } from '../../service/worker/outputs/chunk-files.js';
import { filesUnder } from '../helpers/e2e.js';
import { type TestBuild } from '../helpers/blender-builds.js';
import * as m from './matrix.js';
import { makeRenderDirs, type RenderDirs } from './render-dirs.js';
import { renderWarm, type WarmRender } from './warm-render.js';

let work: string;

/** Gives the calling file one scratch folder for its renders, removed after its tests. */
export function useRenderWork(): void {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'rb-render-matrix-'));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });
}

export interface Job extends RenderDirs {
  final: FinalConfig;
  settings: RenderSettings;
  scene: string;
  build: TestBuild;
}

/** Each fixture's analysis by each build, once (a promise, so runs side by side share it). */
const analyses = new Map<string, Promise<SceneAnalysis>>();
function analysed(build: TestBuild, fixture: m.MatrixFixture, args?: string[]): Promise<SceneAnalysis> {
  const key = `${build.minor}/${fixture}/${args?.join(',') ?? ''}`;
  let a = analyses.get(key);
  if (!a) {
    a = (async () => {
      const dir = join(work, build.minor, `analysis-${fixture}`);
      await mkdir(dir, { recursive: true });
      return analyzeScene({
        blender: build.path,
        file: await m.fixtureOf(fixture, build, args),
        workDir: dir,
        timeoutMs: 120_000,
      });
    })();
    analyses.set(key, a);
  }
  return a;
}

/** Plans frames of the fixture as the worker does from the build's analysis, writes the settings. */
export async function plan(
  build: TestBuild,
  key: string,
  fixture: m.MatrixFixture,
  frames: string,
  tweak?: (s: RenderSettings) => void,
  args?: string[],
): Promise<Job> {
  const d = await makeRenderDirs(join(work, build.minor, key));
  const scene = await m.fixtureOf(fixture, build, args);
  const final = m.finalOf((await analysed(build, fixture, args)).output, build, frames, {
    resolution: [64, 48],
    sampleCount: 4,
  });
  const settings = renderSettingsFrom(final, { compositeDir: d.composite });
  tweak?.(settings);
  await writeFile(d.settingsFile, JSON.stringify(settings));
  return { ...d, final, settings, scene, build };
}

export interface Chunk {
  job: Job;
  result: BlenderRunResult;
  lines: string[];
}

export async function chunk(build: TestBuild, job: Job, start: number, end: number): Promise<Chunk> {
  const inv = renderInvocation({
    binary: build.path,
    sceneFile: job.scene,
    sceneName: 'Scene',
    settingsFile: job.settingsFile,
    attemptDir: job.frames,
    chunk: { start, end, step: 1 },
    jobDir: job.dir,
  });
  const lines: string[] = [];
  const result = await runBlender({ ...inv, cwd: job.dir, timeoutMs: 180_000, onLine: (_s, l) => lines.push(l) });
  return { job, result, lines };
}

/** render_setup.py alone: the settings applied and reported, no frame rendered. */
export async function setupOnly(job: Job): Promise<Chunk> {
  const lines: string[] = [];
  const result = await runBlender({
    binary: job.build.path,
    file: job.scene,
    pythonScript: renderSetupScriptPath(),
    scriptArgs: ['--settings', job.settingsFile],
    cwd: job.dir,
    timeoutMs: 120_000,
    onLine: (_s, l) => lines.push(l),
  });
  return { job, result, lines };
}

export interface Warm extends WarmRender {
  job: Job;
}

/** Renders `runs` of the job in the warm loop (render_loop.py), as a warm-mode worker slot does. */
export async function warm(build: TestBuild, job: Job, runs: FrameRun[]): Promise<Warm> {
  const opts = {
    binary: build.path,
    sceneFile: job.scene,
    sceneName: 'Scene',
    settingsFile: job.settingsFile,
    attemptDir: job.frames,
    jobDir: job.dir,
    blenderMajor: Number(build.minor.split('.')[0]),
  };
  return { job, ...(await renderWarm(opts, job.dir, runs)) };
}

/** Every file the worker expects for `frames`, as `frames/<name>` and `composite/<node folder>/<name>`. */
export function expected(job: Job, frames: number[]): string[] {
  return frames
    .flatMap((f) =>
      filesOfFrame(job.final, f).map((e) => `${e.kind === 'camera' ? 'frames' : 'composite'}/${e.relativePath}`),
    )
    .sort();
}

/** Every file the render wrote, named as expected() names them. */
export async function written(job: Job): Promise<string[]> {
  return [
    ...(await filesUnder(job.frames)).map((f) => `frames/${f}`),
    ...(await filesUnder(job.composite)).map((f) => `composite/${f}`),
  ].sort();
}
