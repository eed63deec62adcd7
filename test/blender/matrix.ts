// Shared by the Blender matrix suites (test/blender/*.test.ts): each suite runs once per build of
// test/helpers/blender-builds.ts (3.4 executable, 4.3 and 5.2 Debian roots), with the build in its
// titles. Blender runs are started two at a time (the machine has two cores) and waited on; no
// suite sleeps.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FinalConfig } from '../../shared/api/analysis.js';
import type { RequestedConfig } from '../../shared/api/render-config.js';
import type { SceneMetadata } from '../../shared/api/scene.js';
import { type RenderCapabilities, resolveFinalConfig } from '../../service/domain/final-config.js';
import { capabilitiesFor } from '../../service/worker/runtime/devices.js';
import { BlenderLogParser, type ProgressEvent } from '../../blender/render/progress-parser.js';
import { parseSetupLine } from '../../blender/render/render-settings.js';
import { buildFixture, type FixtureName } from '../helpers/fixtures.js';
import type { TestBuild } from '../helpers/blender-builds.js';

/**
 * Fixtures of test/fixtures/blend, including those this folder adds (helpers/fixtures.ts names the
 * older ones only; buildFixture builds any `build_NAME.py`).
 */
export type MatrixFixture = FixtureName | 'blender-assets' | 'compositor-multi' | 'stepped-levels';

/** A fixture saved by `build` (cached per build; a 5.2 file is unreadable to 3.4). */
export function fixtureOf(name: MatrixFixture, build: TestBuild, args?: readonly string[]): Promise<string> {
  return buildFixture(name as FixtureName, { blender: build.path, timeoutMs: 180_000, ...(args ? { args } : {}) });
}

/** Runs the jobs at most `width` at a time (two cores: more Blenders only contend), in order of start. */
export async function pool<T>(jobs: ReadonlyArray<() => Promise<T>>, width = 2): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < jobs.length; i = next++) out[i] = await jobs[i]!();
  };
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, lane));
  return out;
}

/** [width, height] of a whole PNG file (signature, IHDR first, IEND last); throws for anything else. */
export function pngSize(file: string): [number, number] {
  const b = readFileSync(file);
  if (b.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') throw new Error(`${file} is not a PNG`);
  if (b.subarray(12, 16).toString('latin1') !== 'IHDR') throw new Error(`${file} has no IHDR first`);
  if (b.subarray(b.length - 8, b.length - 4).toString('latin1') !== 'IEND') throw new Error(`${file} is cut short`);
  return [b.readUInt32BE(16), b.readUInt32BE(20)];
}

/**
 * The app templates that ship with a build (2D Animation, Sculpting, VFX, Video Editing, ...): the
 * system Blender's under /usr/share/blender, a root's under its own usr/share/blender (also in a
 * versioned folder, as official layouts have it).
 */
export function templateFiles(build: TestBuild): string[] {
  const share = build.kind === 'root' ? join(build.path, 'usr/share/blender') : '/usr/share/blender';
  const scriptDirs = [join(share, 'scripts')];
  if (existsSync(share))
    for (const d of readdirSync(share)) if (/^\d+\.\d+$/.test(d)) scriptDirs.push(join(share, d, 'scripts'));
  const files: string[] = [];
  for (const dir of scriptDirs) {
    const templates = join(dir, 'startup/bl_app_templates_system');
    if (!existsSync(templates)) continue;
    for (const t of readdirSync(templates).sort())
      if (existsSync(join(templates, t, 'startup.blend'))) files.push(join(templates, t, 'startup.blend'));
  }
  return files;
}

/** The id this build gives EEVEE (what its analysis reports and render setup sets). */
export function eeveeOf(build: TestBuild): string {
  return build.minor.startsWith('4.') ? 'BLENDER_EEVEE_NEXT' : 'BLENDER_EEVEE';
}

/** Debian's builds have no OpenImageDenoise and no GPU backend usable here: plan as a worker on them would. */
export function capsOf(build: TestBuild): RenderCapabilities {
  return capabilitiesFor(
    {
      version: `${build.minor}.0`,
      capabilities: { hasOpenImageDenoise: false, cyclesBackends: ['CUDA', 'HIP'], precompiledKernels: [] },
    },
    { gpus: [] },
  );
}

/** The final config of a render of `frames` of an analysed scene, as the worker plans it. */
export function finalOf(
  scene: SceneMetadata,
  build: TestBuild,
  frames: string,
  extra: Partial<RequestedConfig> = {},
): FinalConfig {
  const requested: RequestedConfig = { colorManagementPreset: 'default', frameRanges: [frames], ...extra };
  return resolveFinalConfig(scene, { sceneToRender: 'Scene' }, requested, capsOf(build)).finalConfig;
}

/** Progress events of one Blender's lines, through the worker's parser. */
export function eventsOf(lines: readonly string[]): ProgressEvent[] {
  return new BlenderLogParser().lines(lines.join('\n'));
}

export function framesStarted(events: readonly ProgressEvent[]): number[] {
  return events.flatMap((e) => (e.type === 'frameStarted' ? [e.frame] : []));
}

export function framesFinished(events: readonly ProgressEvent[]): number[] {
  return events.flatMap((e) => (e.type === 'frameFinished' ? [e.frame] : []));
}

export function savedPaths(events: readonly ProgressEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'saved' ? [e.path] : []));
}

/** RB_WARNING texts of render_setup.py. */
export function setupWarnings(lines: readonly string[]): string[] {
  return lines.flatMap((l) => {
    const p = parseSetupLine(l);
    return p?.type === 'warning' ? [p.message] : [];
  });
}

/** RB_SETUP_OK's summary; throws with the last lines when there is none. */
export function setupSummary(lines: readonly string[]): Record<string, unknown> {
  for (const l of lines) {
    const p = parseSetupLine(l);
    if (p?.type === 'ok') return p.summary;
  }
  throw new Error(`no RB_SETUP_OK in:\n${lines.slice(-30).join('\n')}`);
}
