// Scene analysis for the `validate` task: runs analyze.py (beside this module) inside Blender (through run.ts),
// reads the JSON it writes and checks it against the API's scene metadata schema. A field that does
// not fit the schema is dropped with a warning rather than failing the job: the analysis is advice,
// and one odd value (say an engine name from a newer Blender) must not hide all the others.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { z } from 'zod';
import { AnalysisWarning, SceneMetadataShape } from '../../shared/api/scene.js';
import { BlenderResultError, UNREADABLE_FILE_LINE, unreadableFile } from '../errors.js';
import { parseRemapLine, type PathRemapSpec, type RemapSummary } from '../remap/path-remaps.js';
import { PYTHON_SCRIPT_EXIT_CODE, runBlender, type BlenderStream } from '../run.js';
import { scriptBeside } from '../script-path.js';
import { type BlenderVersion, parseBlenderVersion } from '../version.js';

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
  /** Cancels the analysis (BlenderCanceledError). */
  signal?: AbortSignal;
  /** Whole-run limit. Default 300000 ms (5 min): loading a very large file is the slow part. */
  timeoutMs?: number;
  /** Written into `pathToFileForRender` (e.g. the path inside the uploaded archive). Default: the file's name. */
  pathToFileForRender?: string;
  /**
   * The file's name as the client knows it, for `output.fileName` and messages (a bare upload is stored as
   * scene.blend). Default: its name on disk.
   */
  shownName?: string;
  /** Extra environment for Blender. Default none. */
  env?: Record<string, string | undefined>;
  /** Run Blender in the sandbox (RunBlenderOptions.sandbox). Default false. */
  sandbox?: boolean;
  /** CPU niceness added to Blender's (RunBlenderOptions.nice). Default 0. */
  nice?: number;
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
  /**
   * The farm runs no bundled add-on (--bundled-addons off): ADDON_REQUIRED says so instead
   * of "select it". Default false.
   */
  refused?: boolean;
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

/** analyze.py, beside this module (see scriptBeside). */
export function analyzeScriptPath(): string {
  return scriptBeside(import.meta.url, 'analyze.py');
}

/** The script's arguments; remaps and add-ons go in files, as a project can carry thousands of remaps. */
async function analysisArgs(opts: AnalyzeSceneOptions, outFile: string): Promise<string[]> {
  const scriptArgs = ['--out', outFile, ...(opts.scene !== undefined ? ['--scene', opts.scene] : [])];
  if (opts.pathRemaps && opts.pathRemaps.remaps.length > 0) {
    const remapFile = join(opts.workDir, 'path-remaps.json');
    await writeFile(remapFile, JSON.stringify({ root: resolve(opts.pathRemaps.root), remaps: opts.pathRemaps.remaps }));
    scriptArgs.push('--remaps', remapFile);
  }
  if (opts.addons) {
    const addonFile = join(opts.workDir, 'analysis-addons.json');
    const addons = {
      bundled: opts.addons.bundled.map((a) => ({ id: a.id, path: resolve(a.path) })),
      selected: opts.addons.selected,
      refused: opts.addons.refused === true,
    };
    await writeFile(addonFile, JSON.stringify(addons));
    scriptArgs.push('--addons', addonFile);
  }
  return scriptArgs;
}

/**
 * Runs the analysis. Throws BlenderFileUnreadableError (Blender exits 1 with one of its
 * cannot-load messages, or fell back to its factory scene), BlenderResultError (the script failed
 * or gave no usable result), run.ts's errors (start, timeout, crash) or BlenderCanceledError.
 */
export async function analyzeScene(opts: AnalyzeSceneOptions): Promise<SceneAnalysis> {
  const outFile = join(opts.workDir, 'scene-analysis.json');
  await rm(outFile, { force: true });
  let version: BlenderVersion | undefined;
  const scriptArgs = await analysisArgs(opts, outFile);
  let remap: RemapSummary | undefined;
  const run = await runBlender({
    binary: opts.blender,
    file: opts.file,
    pythonScript: analyzeScriptPath(),
    scriptArgs,
    cwd: opts.workDir,
    env: opts.env,
    ...(opts.sandbox ? { sandbox: true } : {}),
    ...(opts.nice ? { nice: opts.nice } : {}),
    signal: opts.signal,
    timeoutMs: opts.timeoutMs ?? 300_000,
    onLine: (stream, line) => {
      version ??= parseBlenderVersion(line);
      remap = parseRemapLine(line) ?? remap;
      opts.onLine?.(stream, line);
    },
  });
  const details = { exitCode: run.exitCode, lastLines: run.lastLines };
  if (run.exitCode !== 0) {
    if (run.lastLines.some((l) => UNREADABLE_FILE_LINE.test(l)))
      throw unreadable(opts.shownName ?? opts.file, run.lastLines);
    const why =
      run.exitCode === PYTHON_SCRIPT_EXIT_CODE ? 'the analysis script failed' : `Blender exited with ${run.exitCode}`;
    throw new BlenderResultError(`scene analysis: ${why}`, details);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(outFile, 'utf8'));
  } catch (err) {
    throw new BlenderResultError('scene analysis wrote no readable result', details, { cause: err });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new BlenderResultError('scene analysis result is not a JSON object', details);
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
  return {
    output,
    warnings,
    blenderVersion: version,
    durationMs: run.durationMs,
    lastLines: run.lastLines,
    ...(remap ? { remap } : {}),
  };
}

function unreadable(file: string, lastLines: string[]) {
  return unreadableFile(basename(file), { lastLines });
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
    if (keys.length === 0)
      throw new BlenderResultError('scene analysis result does not fit the schema', { issues: res.error.issues });
    for (const k of keys) delete obj[k];
    dropped.push(...keys);
  }
}
