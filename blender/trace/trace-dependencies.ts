// The TypeScript side of trace_deps.py (beside this module): lists a .blend's external files by
// running the add-on's collector in headless Blender (through run.ts: -b -Y --factory-startup, own
// process group) and reading the CollectedDependencies document it writes.
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { CollectedDependencies } from '../../shared/pack/dependencies.js';
import { BlenderResultError, UNREADABLE_FILE_LINE, unreadableFile } from '../errors.js';
import { hostDataDirs, scriptFolders } from '../build-kind.js';
import { runBlender, type BlenderRunResult } from '../run.js';
import { scriptBeside } from '../script-path.js';

/** trace_deps.py, beside this module (see scriptBeside). */
export function traceScriptPath(): string {
  return scriptBeside(import.meta.url, 'trace_deps.py');
}

export interface TraceDependenciesOptions {
  /** Blender executable. */
  blender: string;
  /** Absolute path of an existing .blend. */
  file: string;
  /** Whole-run limit in ms. */
  timeoutMs: number;
  /** Cancels the trace (BlenderCanceledError). Default none. */
  signal?: AbortSignal;
}

/**
 * The file's external files, as the add-on's collector lists them. Throws run.ts's errors (start,
 * timeout, crash, cancel), BlenderFileUnreadableError, or BlenderResultError when no valid list
 * came back; both of the latter carry `{file, exitCode, lastLines}` (last 20) as details.
 */
export async function traceDependencies(
  opts: TraceDependenciesOptions,
): Promise<CollectedDependencies['dependencies']> {
  const dir = await mkdtemp(join(tmpdir(), 'rb-trace-'));
  const out = join(dir, 'dependencies.json');
  try {
    const run = await runBlender({
      binary: opts.blender,
      file: opts.file,
      pythonScript: traceScriptPath(),
      scriptArgs: [out],
      cwd: dir,
      // The collector checks where each dependency is, anywhere on the artist's disks.
      access: { write: [dir], read: [...hostDataDirs(), ...scriptFolders(traceScriptPath())] },
      timeoutMs: opts.timeoutMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return await readResult(opts.file, out, run);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function readResult(
  file: string,
  out: string,
  run: BlenderRunResult,
): Promise<CollectedDependencies['dependencies']> {
  const details = { file, exitCode: run.exitCode, lastLines: run.lastLines.slice(-20) };
  const text = run.exitCode === 0 ? await readFile(out, 'utf8').catch(() => null) : null;
  if (text === null) {
    // Blender exits 0 without running the script when it cannot load the file. The same words
    // also appear for a missing linked library, so they count only when no list was written.
    if (run.lastLines.some((l) => UNREADABLE_FILE_LINE.test(l))) throw unreadableFile(basename(file), details);
    throw new BlenderResultError(
      `Blender could not list the files of ${basename(file)} (exit code ${run.exitCode}): see lastLines in metadata.`,
      details,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const doc = CollectedDependencies.safeParse(json);
  if (!doc.success) throw new BlenderResultError(`The dependency list of ${basename(file)} is not valid.`, details);
  // A Blender that fell back to another file (its factory scene) would list the wrong files.
  const [want, got] = await Promise.all([realpath(file), realpath(doc.data.blendFile).catch(() => doc.data.blendFile)]);
  if (want !== got) throw new BlenderResultError(`Blender opened ${doc.data.blendFile} instead of ${file}.`, details);
  return doc.data.dependencies;
}
