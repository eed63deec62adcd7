// Plans a project for upload (planProject: a main .blend with the dependencies the add-on
// collected; planFolder: a folder as it is) and writes a plan into one zip (writePack). The zip
// has a manifest at its root (shared/pack/manifest.ts) and is built under a temporary name,
// renamed into place only once complete. packProject and packFolder do both in one call.
import { randomUUID } from 'node:crypto';
import { rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DaemonWarning } from '../../shared/daemon/submission-schemas.js';
import type { AddonToBundle, CollectedDependency } from '../../shared/pack/dependencies.js';
import { PACK_MANIFEST_NAME, type PackManifest, type DependencyKind } from '../../shared/pack/manifest.js';
import { DaemonError } from '../errors.js';
import { expandAddon, expandDependency, FileInfos, SKIPPED_FOLDERS, walkFiles } from './expand.js';
import { packFailed, planLayout, type ExpandedAddon, type ExpandedDependency, type Layout } from './layout.js';
import { buildManifest, type BuiltManifest } from './manifest-build.js';
import { changedAfterPacking } from './snapshot.js';
import { writeZip, type ZipInput, type ZipWritten } from './zip-writer.js';

export interface PackProjectInput {
  /** Absolute path of the main .blend. */
  blendFile: string;
  dependencies: CollectedDependency[];
  /** Add-ons to bundle; those with `selected: false` are left out. Default none. */
  addons?: AddonToBundle[];
}

export interface PackProjectOptions {
  /** Where the finished zip goes (written beside it under a temporary name first). */
  zipPath: string;
  signal?: AbortSignal;
  /** Bytes of the project read so far and in all. Default none. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
  /** Packer name and version for the manifest. Default `renderbridge-daemon`. */
  createdBy?: string;
  /** zlib level for compressible files, 1-9. Default 6. */
  level?: number;
}

/** A file of the plan: where it goes, and its stat when planned (the hash cache's key). */
export interface PlannedFile extends ZipInput {
  mtimeNs: bigint;
  /** `dev:ino`; undefined where the filesystem has no inode numbers. */
  identity: string | undefined;
}

/** Everything about a pack but the bytes: the layout, the files in archive order, the warnings. */
export interface PackPlan {
  layout: Layout;
  files: PlannedFile[];
  warnings: DaemonWarning[];
}

export interface PackOutcome {
  zipPath: string;
  /** Size of the zip. */
  bytes: number;
  /** Files in the archive, the manifest excluded. */
  fileCount: number;
  /** Archive path of the scene to render. */
  sceneFile: string;
  manifest: PackManifest;
  warnings: DaemonWarning[];
}

/** Packs a main .blend, its dependencies and the selected add-ons into a zip (planProject + writePack). */
export async function packProject(input: PackProjectInput, options: PackProjectOptions): Promise<PackOutcome> {
  return writePack(await planProject(input), options);
}

/** A project folder as is into a zip (planFolder + writePack); see planFolder. */
export async function packFolder(
  dir: string,
  options: PackProjectOptions & { sceneFile?: string; addons?: AddonToBundle[] },
): Promise<PackOutcome> {
  return writePack(await planFolder(dir, { ...options, exclude: options.zipPath }), options);
}

/** Plans a main .blend, its dependencies and the selected add-ons. Missing dependencies are listed, not fatal. */
export async function planProject(input: PackProjectInput): Promise<PackPlan> {
  const main = path.resolve(input.blendFile);
  const infos = new FileInfos();
  if (!(await infos.get(main)))
    throw packFailed(`The main .blend "${main}" does not exist or is not a file; save the scene first, then retry.`, {
      file: main,
    });
  const deps: ExpandedDependency[] = [];
  for (const d of input.dependencies) deps.push(await expandDependency(d, infos));
  const addons = await expandAddons(input.addons, infos);
  const layout = planLayout(main, deps, addons, { identity: (f) => infos.known(f)?.identity });
  const warnings = layoutWarnings(layout);
  for (const link of deps.flatMap((d) => d.skippedLinks ?? [])) warnings.push(linkWarning(link));
  if (layout.missing.length > 0) warnings.push(missingWarning(layout.missing));
  return { layout, files: plannedFiles(layout, infos), warnings };
}

export interface PlanFolderOptions {
  /** Archive path (or absolute path inside the folder) of the scene. Default: see planFolder. */
  sceneFile?: string;
  /** Add-ons to bundle. Default none. */
  addons?: AddonToBundle[];
  /** A zip being written into the folder itself, left out with its temporary files. Default none. */
  exclude?: string;
}

/**
 * A project folder as is: every file under it (skipping `.blend1` backups, `__pycache__` and
 * `.git`). The scene is `options.sceneFile` (relative to `dir`, or absolute inside it), else the
 * only top-level .blend, else the only .blend anywhere; otherwise PACK_FAILED lists the choices.
 */
export async function planFolder(dir: string, options: PlanFolderOptions = {}): Promise<PackPlan> {
  const root = path.resolve(dir);
  if (!(await stat(root).catch(() => null))?.isDirectory())
    throw packFailed(`The folder "${root}" does not exist; check the path and retry.`, { folder: root });
  const walked = await walkFiles(root, SKIPPED_FOLDERS);
  const out = options.exclude === undefined ? undefined : path.resolve(options.exclude);
  const files = walked.files.filter(
    (f) => !/\.blend\d+$/i.test(f) && (out === undefined || (f !== out && !f.startsWith(`${out}.partial-`))),
  );
  const main = pickScene(root, files, options.sceneFile);
  const infos = new FileInfos();
  await Promise.all(files.map((f) => infos.get(f)));
  // Every file rides on one `//` dependency of the main file, so the root is the folder itself.
  const deps: ExpandedDependency[] = files
    .filter((f) => f !== main)
    .map((f) => {
      const rel = path.relative(root, f).split(path.sep).join('/');
      return {
        dep: { path: `//${rel}`, absolute: f, kind: kindOf(f), pattern: 'file', blendFile: main, usedBy: [] },
        files: [f],
        missing: [],
      };
    });
  const anchor: ExpandedDependency = {
    dep: { path: '//', absolute: root, kind: 'other', pattern: 'directory', blendFile: main, usedBy: [] },
    files: [],
    missing: [],
  };
  const addons = await expandAddons(options.addons, infos);
  const layout = planLayout(main, [anchor, ...deps], addons, { identity: (f) => infos.known(f)?.identity });
  const warnings = layoutWarnings(layout);
  for (const link of walked.skippedLinks) warnings.push(linkWarning(link));
  const folderLayout = { ...layout, remaps: [] };
  return { layout: folderLayout, files: plannedFiles(folderLayout, infos), warnings };
}

function pickScene(root: string, files: readonly string[], sceneFile?: string): string {
  const blends = files.filter((f) => f.toLowerCase().endsWith('.blend'));
  const rel = (f: string) => path.relative(root, f).split(path.sep).join('/');
  if (sceneFile !== undefined) {
    const wanted = path.resolve(root, sceneFile);
    if (!blends.includes(wanted))
      throw packFailed(
        `The scene file "${sceneFile}" is not a .blend in "${root}"; choose one of: ${list(blends.map(rel))}`,
        { choices: blends.map(rel) },
      );
    return wanted;
  }
  const top = blends.filter((f) => path.dirname(f) === root);
  if (top.length === 1) return top[0] as string;
  if (top.length === 0 && blends.length === 1) return blends[0] as string;
  const choices = (top.length > 0 ? top : blends).map(rel);
  throw packFailed(
    blends.length === 0
      ? `The folder "${root}" holds no .blend file; pack a folder with the scene in it.`
      : `The folder "${root}" holds several .blend files; choose the scene: ${list(choices)}`,
    { choices },
  );
}

async function expandAddons(addons: readonly AddonToBundle[] | undefined, infos: FileInfos): Promise<ExpandedAddon[]> {
  const out: ExpandedAddon[] = [];
  for (const a of addons ?? []) if (a.selected !== false) out.push(await expandAddon(a, infos));
  return out;
}

const IMAGE_EXT = /\.(png|jpe?g|exr|hdr|tiff?|tga|bmp|webp|dds|psd|jp2|cin|dpx)$/i;
const SOUND_EXT = /\.(wav|mp3|ogg|flac|aac|m4a|opus)$/i;
const MOVIE_EXT = /\.(mp4|mov|mkv|avi|webm)$/i;

/** A kind for files of a folder, where no data block says what they are. */
function kindOf(file: string): DependencyKind {
  if (/\.blend$/i.test(file)) return 'library';
  if (IMAGE_EXT.test(file)) return 'image';
  if (SOUND_EXT.test(file)) return 'sound';
  if (MOVIE_EXT.test(file)) return 'movieclip';
  if (/\.(ttf|otf|woff2?|pfb)$/i.test(file)) return 'font';
  if (/\.(vdb|abc|usdc?|bphys)$/i.test(file)) return 'cache';
  return 'other';
}

function layoutWarnings(layout: Layout): DaemonWarning[] {
  return layout.skipped.map((s) => ({ code: 'FILE_SKIPPED', message: `"${s.source}" was not packed: ${s.reason}.` }));
}

function linkWarning(link: string): DaemonWarning {
  return {
    code: 'LINKED_FOLDER_SKIPPED',
    message:
      `"${link}" links to a folder and was not followed; copy its files into the project if the scene needs ` + `them.`,
  };
}

function missingWarning(missing: Layout['missing']): DaemonWarning {
  const libs = missing.filter((m) => m.kind === 'library').length;
  const shown = missing.slice(0, 10).map((m) => m.resolved);
  return {
    code: 'MISSING_FILES',
    message:
      `${missing.length} file(s) the scene uses were not found and are not in the archive` +
      (libs > 0
        ? ` (${libs} linked librar${libs === 1 ? 'y' : 'ies'}: the render service refuses a scene whose ` +
          `libraries are missing)`
        : '') +
      (`: ${shown.join(', ')}${missing.length > shown.length ? ', ...' : ''}. Relink or restore them and pack ` +
        `again, or render without them.`),
  };
}

/** The layout's files with their stat, in archive order; PACK_FAILED for one that vanished meanwhile. */
function plannedFiles(layout: Layout, infos: FileInfos): PlannedFile[] {
  return layout.entries.map((e) => {
    const info = infos.known(e.source);
    if (!info) throw packFailed(`"${e.source}" vanished while packing; retry.`, { file: e.source });
    return {
      name: e.path,
      source: e.source,
      size: info.size,
      mtime: info.mtime,
      mtimeNs: info.mtimeNs,
      identity: info.identity,
    };
  });
}

/**
 * Writes the plan's files and its manifest into a zip at `options.zipPath`. The manifest is built
 * from the checksums taken while writing, or is `manifest` when given (a pack hashed before); then
 * a file whose bytes no longer match it fails the zip with PACK_CHANGED (it changed since it was
 * hashed: pack again).
 */
export async function writePack(
  plan: PackPlan,
  options: PackProjectOptions & { manifest?: BuiltManifest },
): Promise<PackOutcome> {
  const { layout, warnings } = plan;
  const zipPath = path.resolve(options.zipPath);
  let manifest: PackManifest | undefined;
  const trailer = (written: readonly ZipWritten[]): Buffer => {
    const kept = options.manifest;
    if (!kept) {
      const built = buildManifest(layout, written, options.createdBy ?? 'renderbridge-daemon');
      manifest = built.manifest;
      return built.bytes;
    }
    const entries = kept.manifest.entries;
    const changed = written.find(
      (w, i) => entries[i]?.path !== w.name || entries[i]?.sha256 !== w.sha256 || entries[i]?.size !== w.size,
    );
    if (changed || entries.length !== written.length) {
      const source = changed
        ? (layout.entries.find((e) => e.path === changed.name)?.source ?? changed.name)
        : layout.root;
      // As over the blob upload: the pack is stale, and the submission says to pack again.
      throw changedAfterPacking(source, 'was changed');
    }
    manifest = kept.manifest;
    return kept.bytes;
  };
  const tmp = `${zipPath}.partial-${randomUUID()}`;
  try {
    const { bytes } = await writeZip(tmp, plan.files, {
      ...options,
      trailer: { name: PACK_MANIFEST_NAME, data: trailer },
    });
    // No fsync: a pack lost in a crash is rebuilt from the project; the upload reads it back from the page cache.
    await rename(tmp, zipPath);
    return {
      zipPath,
      bytes,
      fileCount: plan.files.length,
      sceneFile: layout.sceneFile,
      manifest: manifest as PackManifest,
      warnings,
    };
  } catch (err) {
    await rm(tmp, { force: true });
    if (err instanceof DaemonError || options.signal?.aborted) throw err;
    throw packFailed(
      `Writing "${zipPath}" failed (${(err as Error).message}); check the free space and permissions of its ` +
        `folder, then retry.`,
      { file: zipPath },
    );
  }
}

function list(items: readonly string[]): string {
  if (items.length === 0) return '(none)';
  return items.length > 20 ? `${items.slice(0, 20).join(', ')}, ... (${items.length} in all)` : items.join(', ');
}
