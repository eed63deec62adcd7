// Where a chunk's Blender writes and where finished files are kept. Blender writes into a
// fresh attempt folder; a file moves into the job's `out/` folder only once Blender has printed
// `Saved:` for it, so a crash mid-write never leaves half a frame among the finished ones, and a
// frame is done when every file expected for it is in `out/` (a retry renders only the others).
import { access, mkdir, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import { expectedFileNames, type ExpectedFile } from '../../domain/expected-outputs.js';
import { CAMERA_PATTERN, classifySavedPath, type SavedPath } from '../../../blender/render/render-invocation.js';
import { compositeFolders } from '../../../blender/render/render-settings.js';

export interface OutputLayout {
  /** Finished files: `out/frames/...` (camera) and `out/composite/...` (File Output nodes). */
  outDir: string;
  frames: string;
  composite: string;
}

export function outputLayout(jobDir: string): OutputLayout {
  const outDir = path.join(jobDir, 'out');
  return { outDir, frames: path.join(outDir, 'frames'), composite: path.join(outDir, 'composite') };
}

/** A fresh folder for one Blender run of a chunk, laid out like `out/`. */
export async function attemptLayout(jobDir: string, label: string): Promise<OutputLayout> {
  const outDir = path.join(jobDir, 'attempts', label.replace(/[^\w.-]/g, '_'));
  await rm(outDir, { recursive: true, force: true });
  const layout = { outDir, frames: path.join(outDir, 'frames'), composite: path.join(outDir, 'composite') };
  await mkdir(layout.frames, { recursive: true });
  await mkdir(layout.composite, { recursive: true });
  return layout;
}

/**
 * Files expected for `frame`, with the scene to render taken from the final config. Compositor
 * files are given relative to the composite folder: `<node folder>/<file>` (render_setup.py
 * points each File Output node at its own folder).
 */
export function filesOfFrame(final: FinalConfig, frame: number): ExpectedFile[] {
  const folders = compositeFolders((final.compositeOutputNodes ?? []).map((n) => n.name));
  return expectedFileNames(final, frame, {
    cameraPattern: CAMERA_PATTERN,
    ...(final.sceneToRender ? { sceneName: final.sceneToRender } : {}),
  }).map((f) =>
    f.kind === 'composite' && f.nodeIndex !== undefined
      ? { ...f, relativePath: `${folders[f.nodeIndex]}/${f.relativePath}` }
      : f,
  );
}

/** Absolute path of an expected file inside a layout. */
export function placeOf(layout: OutputLayout, f: Pick<ExpectedFile, 'kind' | 'relativePath'>): string {
  return path.join(f.kind === 'camera' ? layout.frames : layout.composite, ...f.relativePath.split('/'));
}

async function exists(p: string): Promise<boolean> {
  return access(p).then(
    () => true,
    () => false,
  );
}

/**
 * Frames of `frames` whose camera files are all in `out/`. Compositor files do not decide: a
 * muted or unlinked File Output slot writes nothing, and nodes inside groups are not predicted.
 */
export async function finishedFrames(
  final: FinalConfig,
  layout: OutputLayout,
  frames: readonly number[],
): Promise<Set<number>> {
  const done = new Set<number>();
  for (const frame of frames) {
    const files = filesOfFrame(final, frame).filter((f) => f.kind === 'camera');
    if (files.length > 0 && (await Promise.all(files.map((f) => exists(placeOf(layout, f))))).every(Boolean))
      done.add(frame);
  }
  return done;
}

/** finishedFrames from one listing of `out/frames` instead of a look per file: for many frames at once. */
export async function finishedFramesListed(
  final: FinalConfig,
  layout: OutputLayout,
  frames: readonly number[],
): Promise<Set<number>> {
  const present = new Set(await listFiles(layout.frames));
  const done = new Set<number>();
  for (const frame of frames) {
    const files = filesOfFrame(final, frame).filter((f) => f.kind === 'camera');
    if (files.length > 0 && files.every((f) => present.has(f.relativePath))) done.add(frame);
  }
  return done;
}

/** The frame a written file belongs to: the last run of digits in its name (Blender's `#` run). */
export function frameOfFile(rel: string): number | undefined {
  const name = rel.slice(rel.lastIndexOf('/') + 1).replace(/\.[^.]*$/, '');
  const m = /(\d+)(?!.*\d)/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/**
 * Moves the attempt's files of frames up to `upTo` into `out/` (same relative place, replacing a
 * stale copy); `upTo` undefined moves everything (the run ended well). Called when Blender has
 * finished frame `upTo`: files of later frames may still be being written and stay put, so a
 * crash can never leave half a file among the finished ones.
 */
export async function promoteFinished(from: OutputLayout, to: OutputLayout, upTo?: number): Promise<string[]> {
  const moved: string[] = [];
  for (const [src, dest] of [
    [from.frames, to.frames],
    [from.composite, to.composite],
  ] as const) {
    for (const rel of await listFiles(src)) {
      const frame = frameOfFile(rel);
      if (upTo !== undefined && (frame === undefined || frame > upTo)) continue;
      const target = path.join(dest, ...rel.split('/'));
      await mkdir(path.dirname(target), { recursive: true });
      await rename(path.join(src, ...rel.split('/')), target);
      moved.push(rel);
    }
  }
  return moved;
}

/**
 * Moves the files Blender reported as saved (absolute paths in the attempt's folders, see
 * classifySavedPath) into `out/`; returns them. `made` remembers the folders created so far, so
 * a warm process's frames do not ask the disk again for each file.
 */
export async function promoteSaved(
  from: OutputLayout,
  to: OutputLayout,
  saved: readonly string[],
  made = new Set<string>(),
): Promise<SavedPath[]> {
  const moved: SavedPath[] = [];
  for (const abs of new Set(saved)) {
    let f: SavedPath;
    try {
      f = classifySavedPath(abs, { attemptDir: from.frames, compositeDir: from.composite });
    } catch {
      continue; // not in the attempt's folders: never an output (as promoteFinished never sees it)
    }
    const target = placeOf(to, f);
    const dir = path.dirname(target);
    if (!made.has(dir)) {
      await mkdir(dir, { recursive: true });
      made.add(dir);
    }
    await rename(placeOf(from, f), target);
    moved.push(f);
  }
  return moved;
}

/** Every file under `dir`, `/`-separated and relative to it. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .sort();
}
