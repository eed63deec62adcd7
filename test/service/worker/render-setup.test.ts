// render_setup.py + render-invocation.ts against the real Blender: a finalConfig becomes settings,
// a chunk renders through runBlender, and the files land where expectedFileNames says. The Blender
// runs (about 1.5 s each) all start in beforeAll, two at a time; the tests assert on their results.
// The pure parts without Blender: test/blender/render-invocation.test.ts.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import type { RequestedConfig } from '../../../shared/api/render-config.js';
import { expectedFileNames } from '../../../service/domain/expected-outputs.js';
import { resolveFinalConfig } from '../../../service/domain/final-config.js';
import { type BlenderRunResult, PYTHON_SCRIPT_EXIT_CODE, runBlender } from '../../../blender/run.js';
import { capabilitiesFor } from '../../../service/worker/runtime/devices.js';
import { classifySavedPath, renderInvocation } from '../../../blender/render/render-invocation.js';
import { parseSetupLine, type RenderSettings, renderSettingsFrom } from '../../../blender/render/render-settings.js';
import { parseDeviceLine } from '../../../blender/render/device-report.js';
import { billedRun } from '../../../service/domain/normalized-seconds.js';
import { buildFixture, type FixtureName } from '../../helpers/fixtures.js';
import { CAPS, DEBIAN_BUILD, sceneOf } from '../../helpers/render-scenes.js';

const BLENDER = process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender';

interface Case {
  fixture: FixtureName;
  requested: RequestedConfig;
  /** Changes the settings after renderSettingsFrom (to show what the file alone would do). */
  tweak?: (s: RenderSettings) => void;
  /** Plan on a simulated GPU and pin the chunk to it, as a worker's GPU slot does. */
  simulatedGpu?: boolean;
}
interface Run {
  final: FinalConfig;
  settings: RenderSettings;
  attemptDir: string;
  compositeDir: string;
  blend: string;
  result: BlenderRunResult;
  lines: string[];
}

const CASES: Record<string, Case> = {
  basic: {
    fixture: 'basic',
    requested: {
      colorManagementPreset: 'default',
      frameRanges: ['1-2'],
      activeCamera: 'CamB',
      activeViewLayer: 'Alt',
      sampleCount: 4,
      resolution: [64, 48],
    },
  },
  compositor: { fixture: 'compositor', requested: { colorManagementPreset: 'default', frameRanges: ['1'] } },
  denoiseOff: { fixture: 'denoise', requested: { colorManagementPreset: 'default', frameRanges: ['1'] } },
  denoiseFile: {
    fixture: 'denoise',
    requested: { colorManagementPreset: 'default', frameRanges: ['1'] },
    tweak: (s) => delete s.denoise,
  },
  badCamera: {
    fixture: 'basic',
    requested: { colorManagementPreset: 'default', frameRanges: ['1'], activeCamera: 'NoSuchCam' },
  },
  cudaPinned: {
    fixture: 'basic',
    requested: { colorManagementPreset: 'default', frameRanges: ['1'], computeDeviceType: 'CUDA' },
    simulatedGpu: true,
  },
};
/**
 * No GPU exists on these machines: this inventory is a test double for nvidia-smi, so the plan is
 * CUDA and the chunk is pinned to a UUID no driver knows, and the real Blender finds no device.
 */
const SIMULATED_GPU = 'GPU-5e0f0000-0000-4000-8000-000000000000';
const GPU_CAPS = capabilitiesFor(
  DEBIAN_BUILD,
  { gpus: [{ index: 0, uuid: SIMULATED_GPU, name: 'Simulated GPU', memoryMiB: 8192 }] },
  { runtimeKernelCompile: true },
);

let work: string;
const runs = new Map<string, Run>();
function run(key: string): Run {
  const r = runs.get(key);
  if (!r) throw new Error(`no run ${key}`);
  return r;
}

async function render(key: string, c: Case): Promise<Run> {
  const blend = await buildFixture(c.fixture, { blender: BLENDER });
  const { finalConfig: final, frames } = resolveFinalConfig(
    sceneOf(c.fixture),
    { sceneToRender: 'Scene' },
    c.requested,
    c.simulatedGpu ? GPU_CAPS : CAPS,
  );
  const pin = c.simulatedGpu ? { gpuUuids: [SIMULATED_GPU] } : {};
  const attemptDir = join(work, key);
  const compositeDir = join(attemptDir, 'composite');
  await mkdir(compositeDir, { recursive: true });
  const settings = renderSettingsFrom(final, {
    compositeDir,
    requested: c.requested,
    ...(c.simulatedGpu ? { allowCpuFallback: true } : {}),
    ...pin,
  });
  c.tweak?.(settings);
  const settingsFile = join(work, `${key}.settings.json`);
  await writeFile(settingsFile, JSON.stringify(settings));
  const chunk = { start: frames[0]!, end: frames[frames.length - 1]!, step: 1, frames };
  const inv = renderInvocation({
    binary: BLENDER,
    sceneFile: blend,
    sceneName: final.sceneToRender,
    settingsFile,
    attemptDir,
    chunk,
    deviceType: final.computeDeviceType,
    ...pin,
  });
  const lines: string[] = [];
  const result = await runBlender({
    ...inv,
    cwd: attemptDir,
    timeoutMs: 120_000,
    lastLinesCount: 60,
    onLine: (_s, l) => lines.push(l),
  });
  return { final, settings, attemptDir, compositeDir, blend, result, lines };
}

/** Paths from `Saved: '/x.png'` (camera) and `Saved: /x.png` (File Output nodes). */
function savedPaths(lines: readonly string[]): string[] {
  return lines.flatMap((l) => {
    const m = /^Saved: '?(.*?)'?$/.exec(l);
    return m ? [m[1]!] : [];
  });
}

/** Width and height from a PNG's IHDR chunk. */
function pngSize(file: string): [number, number] {
  const b = readFileSync(file);
  expect(b.subarray(1, 4).toString('latin1')).toBe('PNG');
  expect(b.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return [b.readUInt32BE(16), b.readUInt32BE(20)];
}

function summary(r: Run): Record<string, unknown> {
  const ok = r.lines.map(parseSetupLine).find((p) => p?.type === 'ok');
  if (ok?.type !== 'ok') throw new Error(`no RB_SETUP_OK in:\n${r.result.lastLines.join('\n')}`);
  return ok.summary;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-render-setup-'));
  const queue = Object.entries(CASES);
  const worker = async () => {
    for (let job = queue.shift(); job; job = queue.shift()) runs.set(job[0], await render(job[0], job[1]));
  };
  await Promise.all([worker(), worker()]); // two cores
}, 300_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('render chunk with render_setup.py', () => {
  it('renders basic frames 1-2 with CamB and view layer Alt at 64x48 on the CPU, named per expectedFileNames', () => {
    const r = run('basic');
    expect(r.result.exitCode, r.result.lastLines.join('\n')).toBe(0);
    const argv = r.result.argv;
    expect(argv.slice(argv.indexOf(r.blend), argv.indexOf('--python'))).toEqual([r.blend, '-S', 'Scene']);
    expect(argv.slice(argv.indexOf('-o'), argv.indexOf('--'))).toEqual([
      '-o',
      join(r.attemptDir, 'f_####'),
      '-s',
      '1',
      '-e',
      '2',
      '-j',
      '1',
      '-a',
    ]);
    const s = summary(r);
    expect(s).toMatchObject({
      device: 'CPU',
      camera: 'CamB',
      viewLayers: ['Alt'],
      engine: 'CYCLES',
      denoise: false,
      resolution: [64, 48, 100],
    });
    expect(r.lines.some((l) => l.includes('| Scene, Alt |'))).toBe(true);
    expect(r.lines.some((l) => l.includes('| Scene, Main |'))).toBe(false);
    const expected = [1, 2].flatMap((f) => expectedFileNames(r.final, f, { sceneName: 'Scene' }));
    expect(expected.map((e) => e.relativePath)).toEqual(['f_0001.png', 'f_0002.png']);
    for (const e of expected) expect(pngSize(join(r.attemptDir, e.relativePath))).toEqual([64, 48]);
    const saved = savedPaths(r.lines).map((p) => classifySavedPath(p, r));
    expect(saved).toEqual(expected.map((e) => ({ kind: 'camera', relativePath: e.relativePath })));
  });

  it('redirects the File Output node into compositeDir/FileOut/, slot names kept', () => {
    const r = run('compositor');
    expect(r.result.exitCode, r.result.lastLines.join('\n')).toBe(0);
    expect(r.settings.compositeFolders).toEqual({ FileOut: 'FileOut' });
    const expected = expectedFileNames(r.final, 1, { sceneName: 'Scene' });
    expect(expected.map((e) => [e.kind, e.relativePath, e.nodeName])).toEqual([
      ['camera', 'f_0001.png', undefined],
      ['composite', 'beauty_0001.png', 'FileOut'],
      ['composite', 'mask0001.png', 'FileOut'],
    ]);
    const want = expected.map((e) => ({
      kind: e.kind,
      relativePath:
        e.kind === 'composite' ? `${r.settings.compositeFolders[e.nodeName!]}/${e.relativePath}` : e.relativePath,
    }));
    expect(existsSync(join(r.compositeDir, 'FileOut', 'beauty_0001.png'))).toBe(true);
    expect(pngSize(join(r.compositeDir, 'FileOut', 'mask0001.png'))).toEqual([64, 48]);
    expect(
      savedPaths(r.lines)
        .map((p) => classifySavedPath(p, r))
        .sort((a, b) => a.relativePath.localeCompare(b.relativePath)),
    ).toEqual(want.sort((a, b) => a.relativePath.localeCompare(b.relativePath)));
    // Nothing was written where the file's own base path (`//fileout/`) points.
    expect(existsSync(join(dirname(r.blend), 'fileout'))).toBe(false);
    expect(summary(r).fileOutputs).toEqual([
      { name: 'FileOut', folder: 'FileOut', basePath: `${r.compositeDir}/FileOut/` },
    ]);
  });

  it(
    'turns the file denoising off when the build has no OpenImageDenoise; left to the file, render_setup.py ' +
      'turns it off too, with a warning',
    () => {
      const off = run('denoiseOff');
      expect(off.final.denoisingEnabled).toBe(false);
      expect(off.final.analysisWarnings?.map((w) => w.code)).toContain('DENOISER_UNAVAILABLE');
      expect(off.settings.denoise).toEqual({ enabled: false, denoiser: 'OPENIMAGEDENOISE', useGpu: false });
      expect(off.result.exitCode, off.result.lastLines.join('\n')).toBe(0);
      expect(summary(off).denoise).toBe(false);
      expect(pngSize(join(off.attemptDir, 'f_0001.png'))).toEqual([64, 48]);

      // Settings without `denoise` keep the file's choice, which this build cannot run (Cycles alone
      // would stop with "Build without OpenImageDenoise"): the frame renders without it, and says so.
      const file = run('denoiseFile');
      expect(file.result.exitCode, file.result.lastLines.join('\n')).toBe(0);
      expect(file.lines.map(parseSetupLine)).toContainEqual({
        type: 'warning',
        message: expect.stringMatching(/has no denoiser.*denoising off/),
      });
      expect(summary(file).denoise).toBe(false);
      expect(pngSize(join(file.attemptDir, 'f_0001.png'))).toEqual([64, 48]);
    },
  );

  it('a bad camera name exits 3 with the message, before rendering anything', () => {
    const r = run('badCamera');
    expect(r.result.exitCode).toBe(PYTHON_SCRIPT_EXIT_CODE);
    const text = r.result.lastLines.join('\n');
    expect(text).toContain("camera 'NoSuchCam' not found in scene 'Scene' (cameras: CamA, CamB)");
    expect(r.lines.map(parseSetupLine).find((p) => p?.type === 'error')).toEqual({
      type: 'error',
      message: "camera 'NoSuchCam' not found in scene 'Scene' (cameras: CamA, CamB)",
    });
    expect(existsSync(join(r.attemptDir, 'f_0001.png'))).toBe(false);
  });
});

describe('the device a chunk really used (RB_DEVICE, billed per run)', () => {
  it('a chunk planned on CUDA whose pinned GPU Blender cannot see renders on the CPU and reports it', () => {
    const r = run('cudaPinned');
    expect(r.final).toMatchObject({ computeDeviceType: 'CUDA', gpuCount: 1 });
    expect(r.result.exitCode, r.result.lastLines.join('\n')).toBe(0);
    const reports = r.lines.map(parseDeviceLine).filter((d) => d !== undefined);
    expect(reports).toEqual([{ requested: 'CUDA', device: 'CPU', gpus: 0 }]);
    expect(billedRun(2, reports[0])).toEqual({ seconds: 2, device: 'CPU' });
    expect(r.lines.map(parseSetupLine)).toContainEqual({
      type: 'warning',
      message: 'no CUDA device is visible: rendering on the CPU',
    });
    expect(pngSize(join(r.attemptDir, 'f_0001.png'))).toEqual([64, 48]);
    // A CPU plan reports the CPU too.
    expect(run('basic').lines.map(parseDeviceLine).filter(Boolean)).toEqual([
      { requested: 'CPU', device: 'CPU', gpus: 0 },
    ]);
  });
});
