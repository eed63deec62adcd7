// Lists a .blend's external files by running the add-on's collector in headless Blender
// (python/trace_deps.py, through the worker's runBlender: -b -Y --factory-startup, own process
// group). Without Blender the file is packed as it is, with a BLENDER_NOT_FOUND warning.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CollectedDependencies } from '../shared/pack/dependencies.js';
import { runBlender, type BlenderRunResult } from '../service/worker/blender.js';
import { CanceledTaskError } from '../service/worker/outcomes.js';
import { DaemonError } from './errors.js';
import type { TraceFn } from './ports.js';

export interface TracerDeps {
  /** Blender executable (RENDERBRIDGE_BLENDER / --blender). */
  blender: string;
  /** Whole-run limit. Default 120000 ms. */
  timeoutMs?: number;
}

export const BLENDER_NOT_FOUND_WARNING = {
  code: 'BLENDER_NOT_FOUND',
  message: 'Blender was not found (set RENDERBRIDGE_BLENDER or --blender): the .blend is packed without its external files.',
} as const;

/** trace_deps.py beside this module (sources, tsx, vitest, dist), or in the source tree when dist lacks it. */
export function traceScriptPath(): string {
  const candidates = ['./python/trace_deps.py', '../../daemon/python/trace_deps.py'].map((p) => fileURLToPath(new URL(p, import.meta.url)));
  return candidates.find((p) => existsSync(p)) ?? candidates[0]!;
}

/** Blender's messages when it cannot load a file (3.x/4.x wording). */
const UNREADABLE = /Cannot read file|File format is not supported|not a blend file|Failed to read blend file|Unable to open/i;

export function createTracer(deps: TracerDeps): TraceFn {
  const timeoutMs = deps.timeoutMs ?? 120_000;
  return async (blendFile, options = {}) => {
    const file = resolve(blendFile);
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) throw new DaemonError('PACK_FAILED', `${file} is not a file: give the path of an existing .blend.`, { file });
    const dir = await mkdtemp(join(tmpdir(), 'rb-trace-'));
    const out = join(dir, 'dependencies.json');
    try {
      let run: BlenderRunResult;
      try {
        run = await runBlender({
          binary: deps.blender,
          file,
          pythonScript: traceScriptPath(),
          scriptArgs: [out],
          cwd: dir,
          timeoutMs,
          ...(options.signal ? { signal: options.signal } : {}),
        });
      } catch (err) {
        if (err instanceof CanceledTaskError) throw options.signal?.reason ?? err;
        if ((err as { cause?: NodeJS.ErrnoException }).cause?.code === 'ENOENT') {
          return { dependencies: [], warnings: [{ ...BLENDER_NOT_FOUND_WARNING }] };
        }
        throw new DaemonError('PACK_FAILED', `Listing the files of ${basename(file)} with Blender failed: ${(err as Error).message}.`, { file });
      }
      return { dependencies: await readResult(file, out, run), warnings: [] };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
}

async function readResult(file: string, out: string, run: BlenderRunResult): Promise<CollectedDependencies['dependencies']> {
  const metadata = { file, exitCode: run.exitCode, lastLines: run.lastLines.slice(-20) };
  const text = run.exitCode === 0 ? await readFile(out, 'utf8').catch(() => null) : null;
  if (text === null) {
    // Blender exits 0 without running the script when it cannot load the file. The same words
    // also appear for a missing linked library, so they count only when no list was written.
    if (run.lastLines.some((l) => UNREADABLE.test(l))) {
      throw new DaemonError('PACK_FAILED', `Blender cannot open ${basename(file)}: it is damaged, not a .blend file, or saved by a much newer Blender.`, metadata);
    }
    throw new DaemonError('PACK_FAILED', `Blender could not list the files of ${basename(file)} (exit code ${run.exitCode}): see lastLines in metadata.`, metadata);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const doc = CollectedDependencies.safeParse(json);
  if (!doc.success) throw new DaemonError('PACK_FAILED', `The dependency list of ${basename(file)} is not valid.`, metadata);
  // A Blender that fell back to another file (its factory scene) would list the wrong files.
  const [want, got] = await Promise.all([realpath(file), realpath(doc.data.blendFile).catch(() => doc.data.blendFile)]);
  if (want !== got) throw new DaemonError('PACK_FAILED', `Blender opened ${doc.data.blendFile} instead of ${file}.`, metadata);
  return doc.data.dependencies;
}
