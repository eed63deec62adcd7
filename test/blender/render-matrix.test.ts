// Rendering on every build of the matrix (3.4, 4.3, 5.2), as the worker renders: the scene analysed
// by that build, the worker's final config and expected file names, render_setup.py in a chunk
// (renderInvocation + runBlender, `-s -e -a`) and in the warm loop (render_loop.py through
// warm-process.ts), the lines read by the worker's progress parser. What a user would check: every
// frame and every compositor File Output file is there where the worker expects it and is a whole
// PNG of the asked size; stereo writes both eyes; denoising a build cannot do is turned off with a
// warning, never a failed frame; EEVEE's either name renders with the build's EEVEE; the device
// report (RB_DEVICE) says what the render really runs on; persistent data keeps Cycles' scene.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FinalConfig } from '../../shared/api/analysis.js';
import { analyzeScene, type SceneAnalysis } from '../../blender/analysis/analyze-scene.js';
import { parseDeviceLine } from '../../blender/render/device-report.js';
import {
  classifySavedPath,
  renderInvocation,
  renderSetupScriptPath,
  warmInvocation,
} from '../../blender/render/render-invocation.js';
import { type RenderSettings, renderSettingsFrom } from '../../blender/render/render-settings.js';
import { WarmBlender, type FrameRun } from '../../blender/render/warm-process.js';
import { type BlenderRunResult, runBlender } from '../../blender/run.js';
import { filesOfFrame } from '../../service/worker/outputs/chunk-files.js';
import { filesUnder } from '../helpers/e2e.js';
import { type TestBuild, usableBuilds } from '../helpers/blender-builds.js';
import * as m from './matrix.js';

const LIMITS = { totalMs: 120_000, idleMs: 0 };
let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-render-matrix-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

interface Job {
  dir: string;
  frames: string;
  composite: string;
  final: FinalConfig;
  settings: RenderSettings;
  settingsFile: string;
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
async function plan(
  build: TestBuild,
  key: string,
  fixture: m.MatrixFixture,
  frames: string,
  tweak?: (s: RenderSettings) => void,
  args?: string[],
): Promise<Job> {
  const dir = join(work, build.minor, key);
  const d = {
    dir,
    frames: join(dir, 'frames'),
    composite: join(dir, 'composite'),
    settingsFile: join(dir, 'settings.json'),
  };
  await mkdir(d.frames, { recursive: true });
  await mkdir(d.composite, { recursive: true });
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

interface Chunk {
  job: Job;
  result: BlenderRunResult;
  lines: string[];
}

async function chunk(build: TestBuild, job: Job, start: number, end: number): Promise<Chunk> {
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
async function setupOnly(job: Job): Promise<Chunk> {
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

interface Warm {
  job: Job;
  /** Each frame's own lines, from its RB_FRAME_BEGIN to its RB_FRAME_DONE. */
  lines: Map<number, string[]>;
  /** Frames in the order Blender finished them. */
  done: number[];
  /** Lines outside frames (load, setup). */
  side: string[];
}

async function warm(build: TestBuild, job: Job, runs: FrameRun[]): Promise<Warm> {
  const side: string[] = [];
  const w = WarmBlender.start({
    invocation: warmInvocation({
      binary: build.path,
      sceneFile: job.scene,
      sceneName: 'Scene',
      settingsFile: job.settingsFile,
      attemptDir: job.frames,
      jobDir: job.dir,
      blenderMajor: Number(build.minor.split('.')[0]),
    }),
    cwd: job.dir,
    loadLimits: LIMITS,
    killGraceMs: 2000,
    onLine: (l) => side.push(l),
  });
  try {
    await w.ready;
    const lines = new Map<number, string[]>();
    const done: number[] = [];
    await Promise.all(
      runs.map((run) =>
        w.render({
          run,
          limits: LIMITS,
          onBegin: (f) => lines.set(f, []),
          onLine: (f, l) => lines.get(f)!.push(l),
          onDone: (f) => done.push(f),
        }),
      ),
    );
    w.quit();
    expect(await w.ended).toMatchObject({ exitCode: 0 });
    return { job, lines, done, side };
  } finally {
    w.kill();
    await w.ended;
  }
}

/** Every file the worker expects for `frames`, as `frames/<name>` and `composite/<node folder>/<name>`. */
function expected(job: Job, frames: number[]): string[] {
  return frames
    .flatMap((f) =>
      filesOfFrame(job.final, f).map((e) => `${e.kind === 'camera' ? 'frames' : 'composite'}/${e.relativePath}`),
    )
    .sort();
}

async function written(job: Job): Promise<string[]> {
  return [
    ...(await filesUnder(job.frames)).map((f) => `frames/${f}`),
    ...(await filesUnder(job.composite)).map((f) => `composite/${f}`),
  ].sort();
}

describe.each(usableBuilds('render matrix').map((b) => [b.minor, b] as const))(
  'rendering on Blender %s',
  (_minor, build) => {
    const r = new Map<string, Chunk | Warm>();
    const get = <T extends Chunk | Warm>(key: string) => r.get(key) as T;
    const eevee = m.eeveeOf(build);
    const otherEevee = eevee === 'BLENDER_EEVEE' ? 'BLENDER_EEVEE_NEXT' : 'BLENDER_EEVEE';

    beforeAll(async () => {
      const noDenoiseInSettings = (s: RenderSettings) => delete s.denoise;
      await m.pool([
        async () => r.set('chunk', await chunk(build, await plan(build, 'chunk', 'compositor', '1-2'), 1, 2)),
        async () =>
          r.set(
            'warm',
            await warm(build, await plan(build, 'warm', 'compositor', '1-2'), [
              { start: 2, end: 2, step: 1 },
              { start: 1, end: 1, step: 1 },
            ]),
          ),
        async () => r.set('multi', await chunk(build, await plan(build, 'multi', 'compositor-multi', '1'), 1, 1)),
        async () => r.set('stereo', await chunk(build, await plan(build, 'stereo', 'stereo', '1'), 1, 1)),
        async () =>
          r.set(
            'denoiseAsked',
            await chunk(
              build,
              await plan(
                build,
                'denoise-asked',
                'denoise',
                '1',
                (s) => (s.denoise = { enabled: true, denoiser: 'OPENIMAGEDENOISE' }),
              ),
              1,
              1,
            ),
          ),
        async () =>
          r.set(
            'denoiseFile',
            await chunk(build, await plan(build, 'denoise-file', 'denoise', '1', noDenoiseInSettings), 1, 1),
          ),
        // Setup only (no frame arguments): EEVEE asked by the other build's name; CUDA, with no GPU here.
        async () =>
          r.set('eevee', await setupOnly(await plan(build, 'eevee', 'basic', '1', (s) => (s.engine = otherEevee)))),
        async () =>
          r.set(
            'cuda',
            await setupOnly(
              await plan(build, 'cuda', 'basic', '1', (s) => (s.device = { type: 'CUDA', allowCpuFallback: true })),
            ),
          ),
        async () =>
          r.set(
            'persistent',
            await warm(
              build,
              await plan(build, 'persistent', 'monkeys', '1-3', (s) => (s.persistentData = true), ['1', '4']),
              [
                { start: 1, end: 1, step: 1 },
                { start: 2, end: 3, step: 1 },
              ],
            ),
          ),
        async () =>
          r.set(
            'rebuilt',
            await warm(
              build,
              await plan(build, 'rebuilt', 'monkeys', '1-2', (s) => (s.persistentData = false), ['1', '4']),
              [{ start: 1, end: 2, step: 1 }],
            ),
          ),
      ]);
    }, 600_000);

    it(
      'a chunk writes the camera frames and the File Output files where the worker expects them, and reports ' +
        'each frame',
      async () => {
        const { job, result, lines } = get<Chunk>('chunk');
        expect(result.exitCode, result.lastLines.join('\n')).toBe(0);
        expect(expected(job, [1, 2])).toEqual([
          'composite/FileOut/beauty_0001.png',
          'composite/FileOut/beauty_0002.png',
          'composite/FileOut/mask0001.png',
          'composite/FileOut/mask0002.png',
          'frames/f_0001.png',
          'frames/f_0002.png',
        ]);
        expect(await written(job)).toEqual(expected(job, [1, 2]));
        for (const f of await written(job)) expect(m.pngSize(join(job.dir, f)), f).toEqual([64, 48]);
        expect(m.setupSummary(lines).fileOutputs).toEqual([
          { name: 'FileOut', folder: 'FileOut', basePath: `${job.composite}/FileOut/` },
        ]);
        // What the worker's parser makes of Blender's lines: each frame started, saved and finished once.
        const events = m.eventsOf(lines);
        expect(m.framesStarted(events)).toEqual([1, 2]);
        expect(m.framesFinished(events)).toEqual([1, 2]);
        const saved = m
          .savedPaths(events)
          .map((p) => classifySavedPath(p, { attemptDir: job.frames, compositeDir: job.composite }));
        expect(saved.map((s) => `${s.kind === 'camera' ? 'frames' : 'composite'}/${s.relativePath}`).sort()).toEqual(
          expected(job, [1, 2]),
        );
      },
    );

    it('the warm loop writes the same files frame by frame, each with its own progress and saved lines', async () => {
      const { job, lines, done } = get<Warm>('warm');
      expect(done).toEqual([2, 1]);
      const files = await written(job);
      expect(files).toEqual(await written(get<Chunk>('chunk').job));
      for (const f of files) expect(m.pngSize(join(job.dir, f)), f).toEqual([64, 48]);
      for (const frame of [1, 2]) {
        const events = m.eventsOf(lines.get(frame) ?? []);
        expect(m.framesStarted(events), `frame ${frame}`).toEqual([frame]);
        expect(m.framesFinished(events), `frame ${frame}`).toEqual([frame]);
        const saved = m
          .savedPaths(events)
          .map((p) => classifySavedPath(p, { attemptDir: job.frames, compositeDir: job.composite }).relativePath);
        expect(saved.sort()).toEqual(
          filesOfFrame(job.final, frame)
            .map((e) => e.relativePath)
            .sort(),
        );
      }
    });

    it(
      'File Output nodes with sub folders, frame digits, a multilayer EXR and (5.x) path templates: the files ' +
        'the worker expects',
      async () => {
        const { job, result } = get<Chunk>('multi');
        expect(result.exitCode, result.lastLines.join('\n')).toBe(0);
        const want = [
          'composite/Beauty/beauty_0001.png',
          'composite/Beauty/sub/deep_01_v.png',
          'composite/Layers/layers_0001.exr',
          'composite/Named/Scene_64_img0001.png',
          'frames/f_0001.png',
        ];
        expect(expected(job, [1])).toEqual(want);
        expect(await written(job)).toEqual(want);
        for (const f of want.filter((x) => x.endsWith('.png')))
          expect(m.pngSize(join(job.dir, f)), f).toEqual([64, 48]);
        // OpenEXR's magic number.
        expect((await readFile(join(job.dir, 'composite/Layers/layers_0001.exr'))).subarray(0, 4).toString('hex')).toBe(
          '762f3101',
        );
      },
    );

    it('stereo writes the left and right views of each frame', async () => {
      const { job, result } = get<Chunk>('stereo');
      expect(result.exitCode, result.lastLines.join('\n')).toBe(0);
      expect(await written(job)).toEqual(['frames/f_0001_L.png', 'frames/f_0001_R.png']);
      expect(expected(job, [1])).toEqual(['frames/f_0001_L.png', 'frames/f_0001_R.png']);
      for (const f of await written(job)) expect(m.pngSize(join(job.dir, f))).toEqual([64, 48]);
    });

    it('denoising on (asked or from the file) renders without it on a build with no denoiser, says so', async () => {
      for (const key of ['denoiseAsked', 'denoiseFile']) {
        const { job, result, lines } = get<Chunk>(key);
        expect(result.exitCode, `${key}:\n${result.lastLines.join('\n')}`).toBe(0);
        expect(m.setupWarnings(lines).join('\n'), key).toMatch(/no denoiser .*denoising off/);
        expect(m.setupSummary(lines).denoise, key).toBe(false);
        expect(m.pngSize(join(job.frames, 'f_0001.png'))).toEqual([64, 48]);
        expect(lines.join('\n')).not.toMatch(/Failed to denoise|without OpenImageDenoise/);
      }
    });

    it(`${otherEevee} asked sets the build's ${eevee}; a CUDA render with no GPU reports the CPU it uses`, () => {
      const ee = get<Chunk>('eevee');
      expect(ee.result.exitCode, ee.result.lastLines.join('\n')).toBe(0);
      expect(m.setupSummary(ee.lines)).toMatchObject({ engine: eevee, device: 'ENGINE_DEFAULT' });
      expect(ee.lines.map(parseDeviceLine).filter(Boolean)).toEqual([
        { requested: 'CPU', device: 'ENGINE_DEFAULT', gpus: 0 },
      ]);
      const cuda = get<Chunk>('cuda');
      expect(cuda.result.exitCode, cuda.result.lastLines.join('\n')).toBe(0);
      expect(m.setupSummary(cuda.lines)).toMatchObject({ engine: 'CYCLES', device: 'CPU' });
      expect(cuda.lines.map(parseDeviceLine).filter(Boolean)).toEqual([{ requested: 'CUDA', device: 'CPU', gpus: 0 }]);
      expect(m.setupWarnings(cuda.lines).some((w) => /CUDA.*: rendering on the CPU$/.test(w))).toBe(true);
    });

    it("persistent data keeps Cycles' scene between frames and runs; without it each frame rebuilds it", () => {
      const bvh = (w: Warm) =>
        [...w.lines].filter(([, own]) => own.some((l) => l.includes('| Building BVH'))).map(([f]) => f);
      expect(get<Warm>('persistent').done).toEqual([1, 2, 3]);
      expect(bvh(get<Warm>('persistent'))).toEqual([1]);
      expect(bvh(get<Warm>('rebuilt'))).toEqual([1, 2]);
    });
  },
);
