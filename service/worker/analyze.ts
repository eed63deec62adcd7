// Scene analysis for the `validate` task: runs python/analyze.py inside Blender (through blender.ts),
// reads the JSON it writes and checks it against the API's scene metadata schema. A field that does
// not fit the schema is dropped with a warning rather than failing the job: the analysis is advice,
// and one odd value (say an engine name from a newer Blender) must not hide all the others.
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { AnalysisWarning, SceneMetadataShape } from '../../shared/api/scene.js';
import { type BlenderVersion, parseBlenderVersion, PYTHON_SCRIPT_EXIT_CODE, runBlender } from './blender.js';
import type { BlenderStream } from './blender.js';
import { FatalTaskError, RetryableTaskError } from './outcomes.js';
import type { PathRemapSpec } from './render-invocation.js';

/** What analyze.py returns, validated. Every field optional, as in the API. */
export const AnalysisOutput = z.object(SceneMetadataShape).partial();
export type AnalysisOutput = z.infer<typeof AnalysisOutput>;

export interface AnalyzeSceneOptions {
  /** Blender executable. Default `blender` from PATH. */
  blender?: string;
  /** The .blend to analyse (absolute, or relative to `workDir`). */
  file: string;
  /** Scene to analyse. Default: the file's active scene. A name not in the file gives a blocking SCENE_NOT_FOUND. */
  scene?: string;
  /** Existing folder for the result file (`scene-analysis.json`); also Blender's working directory. */
  workDir: string;
  /** Cancels the analysis (CanceledTaskError). */
  signal?: AbortSignal;
  /** Whole-run limit. Default 300000 ms (5 min): loading a very large file is the slow part. */
  timeoutMs?: number;
  /** Written into `pathToFileForRender` (e.g. the path inside the uploaded archive). Default: the file's name. */
  pathToFileForRender?: string;
  /** The file's name as the client knows it, for `output.fileName` and messages (a bare upload is stored as scene.blend). Default: its name on disk. */
  shownName?: string;
  /** Extra environment for Blender. Default none. */
  env?: Record<string, string | undefined>;
  /** Blender's output lines, for logs. Default none. */
  onLine?: (stream: BlenderStream, line: string) => void;
  /** The packer's path remaps, applied before the analysis reads any path. Default none. */
  pathRemaps?: PathRemapSpec;
  /**
   * Add-ons for `output.addons`: the pack's bundled ones (module id and absolute folder or .py path;
   * their sources are searched as text for what the file's data needs, never run) and the ids the
   * render will enable (`selected`; needed add-ons outside it get an ADDON_REQUIRED warning).
   * Default none: `addons` lists only what the file needs.
   */
  addons?: AnalysisAddons;
}

export interface AnalysisAddons {
  bundled: Array<{ id: string; path: string }>;
  selected: string[];
}

/** What analyze.py's `RB_REMAP` line says: remaps applied, those that failed (first 20), those that matched nothing. */
export interface RemapSummary {
  remapped: number;
  failed: Array<{ id: string; from: string; reason: string }>;
  unused: number;
}

export interface SceneAnalysis {
  output: AnalysisOutput;
  /** Same list as `output.analysisWarnings`. */
  warnings: AnalysisWarning[];
  /** The Blender that ran the analysis, from its banner line; undefined if it printed none. */
  blenderVersion: BlenderVersion | undefined;
  durationMs: number;
  lastLines: string[];
  /** Present when remaps were given and applied. */
  remap?: RemapSummary;
}

/** analyze.py beside this module (sources, tsx, vitest), or in the source tree when running from dist/. */
export function analyzeScriptPath(): string {
  const candidates = ['./python/analyze.py', '../../../service/worker/python/analyze.py'].map((p) =>
    fileURLToPath(new URL(p, import.meta.url)),
  );
  return candidates.find((p) => existsSync(p)) ?? candidates[0]!;
}

/** Blender's messages when it cannot load a file (3.x/4.x wording); it then exits 1. */
const UNREADABLE = /Cannot read file|File format is not supported|not a blend file|Failed to read blend file|Unable to open/i;

/** Runs the analysis. Throws FatalTaskError (file unreadable), RetryableTaskError (crash, hang, no result) or CanceledTaskError. */
export async function analyzeScene(opts: AnalyzeSceneOptions): Promise<SceneAnalysis> {
  const outFile = join(opts.workDir, 'scene-analysis.json');
  await rm(outFile, { force: true });
  let version: BlenderVersion | undefined;
  const scriptArgs = ['--out', outFile, ...(opts.scene !== undefined ? ['--scene', opts.scene] : [])];
  if (opts.pathRemaps && opts.pathRemaps.remaps.length > 0) {
    // A file, not arguments: a project can carry thousands of remaps.
    const remapFile = join(opts.workDir, 'path-remaps.json');
    await writeFile(remapFile, JSON.stringify({ root: resolve(opts.pathRemaps.root), remaps: opts.pathRemaps.remaps }));
    scriptArgs.push('--remaps', remapFile);
  }
  if (opts.addons) {
    const addonFile = join(opts.workDir, 'analysis-addons.json');
    await writeFile(addonFile, JSON.stringify({ bundled: opts.addons.bundled.map((a) => ({ id: a.id, path: resolve(a.path) })), selected: opts.addons.selected }));
    scriptArgs.push('--addons', addonFile);
  }
  let remap: RemapSummary | undefined;
  const run = await runBlender({
    binary: opts.blender,
    file: opts.file,
    pythonScript: analyzeScriptPath(),
    scriptArgs,
    cwd: opts.workDir,
    env: opts.env,
    signal: opts.signal,
    timeoutMs: opts.timeoutMs ?? 300_000,
    onLine: (stream, line) => {
      version ??= parseBlenderVersion(line);
      if (line.startsWith('RB_REMAP ')) remap = parseRemapLine(line) ?? remap;
      opts.onLine?.(stream, line);
    },
  });
  const details = { exitCode: run.exitCode, lastLines: run.lastLines };
  if (run.exitCode !== 0) {
    if (run.lastLines.some((l) => UNREADABLE.test(l))) throw unreadable(opts.shownName ?? opts.file, run.lastLines);
    const why = run.exitCode === PYTHON_SCRIPT_EXIT_CODE ? 'the analysis script failed' : `Blender exited with ${run.exitCode}`;
    throw new RetryableTaskError(`scene analysis: ${why}`, details);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(outFile, 'utf8'));
  } catch (err) {
    throw new RetryableTaskError('scene analysis wrote no readable result', details, { cause: err });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new RetryableTaskError('scene analysis result is not a JSON object', details);
  }
  const { output, dropped } = validateOutput(raw as Record<string, unknown>);
  // A Blender that fell back to its factory scene would analyse the wrong thing: refuse it.
  if (output.fileName !== basename(opts.file)) throw unreadable(opts.shownName ?? opts.file, run.lastLines);
  output.fileName = opts.shownName ?? output.fileName;
  const warnings = [...(output.analysisWarnings ?? [])];
  if (dropped.length > 0) {
    warnings.push({
      code: 'ANALYSIS_FIELD_DROPPED',
      blocking: false,
      message: `Values of ${dropped.join(', ')} did not fit the API schema and were left out.`,
    });
  }
  output.analysisWarnings = warnings;
  output.pathToFileForRender = opts.pathToFileForRender ?? output.pathToFileForRender;
  return { output, warnings, blenderVersion: version, durationMs: run.durationMs, lastLines: run.lastLines, ...(remap ? { remap } : {}) };
}

function parseRemapLine(line: string): RemapSummary | undefined {
  try {
    const v = JSON.parse(line.slice('RB_REMAP '.length)) as RemapSummary;
    return typeof v.remapped === 'number' && Array.isArray(v.failed) ? v : undefined;
  } catch {
    return undefined;
  }
}

function unreadable(file: string, lastLines: string[]): FatalTaskError {
  return FatalTaskError.validation(
    'SCENE_FILE_UNREADABLE',
    `Blender cannot open ${basename(file)}: it is damaged, not a .blend file, or saved by a much newer Blender.`,
    { lastLines },
  );
}

/** Parses leniently: top-level fields that fail the schema are removed and named in `dropped`. */
export function validateOutput(raw: Record<string, unknown>): { output: AnalysisOutput; dropped: string[] } {
  const obj = { ...raw };
  const dropped: string[] = [];
  for (;;) {
    const res = AnalysisOutput.safeParse(obj);
    if (res.success) return { output: res.data, dropped };
    const keys = [...new Set(res.error.issues.map((i) => String(i.path[0] ?? '')))].filter((k) => k in obj);
    // Cannot happen for a plain object (every issue lies under a key), but never loop forever.
    if (keys.length === 0) throw new RetryableTaskError('scene analysis result does not fit the schema', { issues: res.error.issues });
    for (const k of keys) delete obj[k];
    dropped.push(...keys);
  }
}
