// Finds the files behind each collected dependency on disk: one file, every `<UDIM>`/`<UVTILE>`
// tile, every frame of an image sequence, everything under a cache folder. Files are stat'ed
// once here (size for progress, device + inode to tell two paths of one file apart).
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { AddonToBundle, CollectedDependency } from '../../shared/pack/dependencies.js';
import { packFailed, type ExpandedAddon, type ExpandedDependency } from './layout.js';

export interface FileInfo {
  size: number;
  mtime: Date;
  /** Modification time in nanoseconds (what the hash cache compares; Date keeps only milliseconds). */
  mtimeNs: bigint;
  /** `dev:ino`; undefined where the filesystem reports no inode numbers. */
  identity: string | undefined;
}

/** Stats of regular files (links followed), null for anything missing or not a file. Shared by one pack. */
export class FileInfos {
  private readonly pending = new Map<string, Promise<FileInfo | null>>();
  private readonly done = new Map<string, FileInfo | null>();

  get(file: string): Promise<FileInfo | null> {
    let p = this.pending.get(file);
    if (!p) {
      p = stat(file, { bigint: true }).then(
        (s) =>
          s.isFile()
            ? {
                size: Number(s.size),
                mtime: s.mtime,
                mtimeNs: s.mtimeNs,
                identity: s.ino === 0n ? undefined : `${s.dev}:${s.ino}`,
              }
            : null,
        () => null,
      );
      p = p.then((v) => (this.done.set(file, v), v));
      this.pending.set(file, p);
    }
    return p;
  }

  /** A file already stat'ed through get(); undefined when it was not. */
  known(file: string): FileInfo | null | undefined {
    return this.done.get(file);
  }
}

export interface WalkResult {
  files: string[];
  /** Linked folders not followed (a link cycle would never end). */
  skippedLinks: string[];
}

/** Folders never packed from projects and add-ons: Python bytecode and version control. */
export const SKIPPED_FOLDERS: ReadonlySet<string> = new Set(['__pycache__', '.git']);

/** Every file under `dir` (links to files followed, links to folders not), sorted. */
export async function walkFiles(dir: string, skipFolders: ReadonlySet<string> = new Set()): Promise<WalkResult> {
  const out: WalkResult = { files: [], skippedLinks: [] };
  const visit = async (d: string): Promise<void> => {
    let items: Dirent[];
    try {
      items = await readdir(d, { withFileTypes: true });
    } catch (err) {
      throw packFailed(
        `The folder "${d}" cannot be read (${(err as Error).message}); check its permissions and retry.`,
      );
    }
    for (const it of items) {
      const full = path.join(d, it.name);
      if (it.isDirectory()) {
        if (!skipFolders.has(it.name)) await visit(full);
      } else if (it.isFile()) {
        out.files.push(full);
      } else if (it.isSymbolicLink()) {
        const s = await stat(full).catch(() => null);
        if (s?.isFile()) out.files.push(full);
        else if (s?.isDirectory()) out.skippedLinks.push(full);
      }
    }
  };
  await visit(dir);
  out.files.sort();
  out.skippedLinks.sort();
  return out;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Matches the names of a pattern's files in its folder, or null when the name is no pattern. */
export function patternMatcher(name: string, pattern: CollectedDependency['pattern']): RegExp | null {
  if (pattern === 'udim') {
    if (!/<UDIM>|<UVTILE>/.test(name)) return null;
    const re = escapeRegExp(name)
      .replace(/<UDIM>/g, '\\d{4}')
      .replace(/<UVTILE>/g, 'u\\d+_v\\d+');
    return new RegExp(`^${re}$`);
  }
  if (pattern === 'sequence') {
    // The frame number is the last run of digits: `shot.v2.0001.exr` -> `shot.v2.` + N + `.exr`.
    const m = /^(.*?)(\d+)(\D*)$/.exec(name);
    return m ? new RegExp(`^${escapeRegExp(m[1] ?? '')}\\d+${escapeRegExp(m[3] ?? '')}$`) : null;
  }
  return null;
}

async function matchingFiles(abs: string, pattern: CollectedDependency['pattern']): Promise<string[] | null> {
  const re = patternMatcher(path.basename(abs), pattern);
  if (!re) return null;
  const dir = path.dirname(abs);
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.filter((n) => re.test(n)).map((n) => path.join(dir, n));
}

/** The files of one dependency: those that exist, and what was looked for but is not there. */
export async function expandDependency(dep: CollectedDependency, infos: FileInfos): Promise<ExpandedDependency> {
  const abs = path.resolve(path.dirname(dep.blendFile), dep.absolute);
  const pattern = dep.pattern ?? 'file';
  let candidates: string[];
  let skippedLinks: string[] = [];
  if (dep.files && dep.files.length > 0) candidates = dep.files.map((f) => path.resolve(f));
  else if (pattern === 'directory') {
    const walked = (await stat(abs).catch(() => null))?.isDirectory()
      ? await walkFiles(abs)
      : { files: [], skippedLinks: [] };
    candidates = walked.files;
    skippedLinks = walked.skippedLinks;
  } else candidates = (await matchingFiles(abs, pattern)) ?? [abs];
  const files: string[] = [];
  const missing: string[] = [];
  const unique = [...new Set(candidates)].sort();
  const found = await Promise.all(unique.map((f) => infos.get(f)));
  unique.forEach((f, i) => (found[i] ? files : missing).push(f));
  // A pattern with no file at all is reported by its own path (the tiles or frames are unknown).
  if (files.length === 0 && missing.length === 0) missing.push(abs);
  return { dep: { ...dep, absolute: abs, pattern }, files, missing, skippedLinks };
}

/** A selected add-on's files; a missing or malformed one fails the pack (the artist chose it). */
export async function expandAddon(addon: AddonToBundle, infos: FileInfos): Promise<ExpandedAddon> {
  const abs = path.resolve(addon.path);
  const s = await stat(abs).catch(() => null);
  if (s?.isFile()) {
    if (!abs.toLowerCase().endsWith('.py'))
      throw packFailed(
        `The add-on "${addon.module}" at "${abs}" is neither a folder nor a .py file; pick the add-on's ` +
          `folder or file.`,
      );
    await infos.get(abs);
    return { addon: { ...addon, path: abs }, single: true, files: [] };
  }
  if (!s?.isDirectory())
    throw packFailed(
      `The add-on "${addon.module}" was not found at "${abs}"; deselect it or fix its path, then retry.`,
    );
  const { files } = await walkFiles(abs, SKIPPED_FOLDERS);
  if (!files.includes(path.join(abs, '__init__.py')))
    throw packFailed(
      `The folder "${abs}" of add-on "${addon.module}" has no __init__.py; pick the add-on's own folder.`,
    );
  await Promise.all(files.map((f) => infos.get(f)));
  return { addon: { ...addon, path: abs }, single: false, files };
}
