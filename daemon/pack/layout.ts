// Where every file goes in the archive, and which paths written in the .blend files the worker
// must remap. Pure: the caller expands patterns and stats files first (expand.ts); the paths
// themselves are archive-paths.ts's. The rules are shared with the worker, which applies the remaps:
// - root = deepest common folder of the main .blend's folder and the targets of its own `//`
//   dependencies; files under root keep their place (`/`-separated, relative to root);
// - any other file goes to `_external/<mirror>`, its absolute path with the leading `/` dropped
//   (`C:\x` -> `C/x`, `\\server\share\x` -> `UNC/server/share/x`), which keeps the relations
//   between external files (a library and its own textures);
// - a remap {from, to, blendFile} is written for each dependency whose path does not resolve in
//   the archive by itself: every path that is not `//`-relative, and every `//` path that leads
//   elsewhere than its target's place.
import path from 'node:path';
import { DaemonError } from '../errors.js';
import { archivePathProblem, placePath, projectRoot, type PathApi } from './archive-paths.js';
import type { AddonToBundle, CollectedDependency } from '../../shared/pack/dependencies.js';
import {
  DependencyKind,
  EXTERNAL_DIR,
  PACK_MANIFEST_NAME,
  type MissingFile,
  type PathRemap,
} from '../../shared/pack/manifest.js';

/** Folder of the archive holding bundled add-ons. */
export const ADDONS_DIR = '_addons';
/** Merged `usedBy` lists are cut to what the manifest schema allows. */
const MAX_USED_BY = 1000;

/** A dependency with its files found on disk (expand.ts). */
export interface ExpandedDependency {
  dep: CollectedDependency;
  /** Absolute files that exist. */
  files: string[];
  /** Absolute files (or patterns) that do not. */
  missing: string[];
  /** Linked folders inside a `directory` dependency, not followed (reported as warnings). */
  skippedLinks?: string[];
}

/** A selected add-on with its files (`files` empty for a single-file add-on). */
export interface ExpandedAddon {
  addon: AddonToBundle;
  single: boolean;
  files: string[];
}

export interface PlannedEntry {
  /** Archive path. */
  path: string;
  /** Absolute source file. */
  source: string;
  kind: DependencyKind;
}

export interface Layout {
  root: string;
  /** Sorted by archive path (code points). */
  entries: PlannedEntry[];
  remaps: PathRemap[];
  missing: MissingFile[];
  addons: { id: string; name: string; path: string; addonType: string }[];
  /** Files left out, with why (a project file named like the manifest). */
  skipped: { source: string; reason: string }[];
  /** Archive path of the main .blend. */
  sceneFile: string;
}

export interface LayoutOptions {
  /** Path flavour of the packing machine. Default: this platform's (`path`). */
  pathApi?: PathApi;
  /**
   * A key equal for two paths of one file (device + inode), used only when two paths clash.
   * Default: none (a clash fails).
   */
  identity?: (source: string) => string | undefined;
}

const KIND_ORDER = DependencyKind.options;
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
/** Names that one case-insensitive or normalising filesystem would write to one file. */
const clashKey = (p: string): string => p.normalize('NFC').toLowerCase();

interface Candidate extends PlannedEntry {
  /** Lower keeps the name when two paths of one file clash: main .blend, add-ons, project, external. */
  priority: number;
}

/** Plans the archive of a main .blend, its expanded dependencies and the selected add-ons. */
export function planLayout(
  mainBlend: string,
  deps: readonly ExpandedDependency[],
  addons: readonly ExpandedAddon[] = [],
  opts: LayoutOptions = {},
): Layout {
  const api = opts.pathApi ?? path;
  const main = api.normalize(mainBlend);
  const root = projectRoot(
    main,
    deps.map((d) => d.dep),
    api,
  );
  const place = (abs: string) => placePath(abs, root, api);
  const sceneFile = place(main);

  // Keyed by source and place: a file wanted at two places (an add-on inside the project) is stored at both.
  const planned = new Map<string, Candidate>();
  const add = (source: string, archive: string, kind: DependencyKind, priority: number) => {
    const prev = planned.get(`${source}\0${archive}`);
    if (!prev) return void planned.set(`${source}\0${archive}`, { path: archive, source, kind, priority });
    if (KIND_ORDER.indexOf(kind) < KIND_ORDER.indexOf(prev.kind)) prev.kind = kind;
  };
  add(main, sceneFile, 'blend', 0);
  const manifestAddons: Layout['addons'] = [];
  for (const a of [...addons].sort((x, y) => cmp(x.addon.module, y.addon.module))) {
    const m = a.addon.module;
    if (m.includes('/') || m.includes('\\') || archivePathProblem(m))
      throw packFailed(
        `The add-on module name "${m}" cannot be a folder name in the archive; bundle add-ons by their ` +
          `Python module name.`,
      );
    if (manifestAddons.some((x) => x.id === m))
      throw packFailed(`Two add-ons to bundle have the module name "${m}"; select only one of them.`);
    const base = a.single ? `${ADDONS_DIR}/${m}.py` : `${ADDONS_DIR}/${m}`;
    manifestAddons.push({ id: m, name: a.addon.name, path: base, addonType: a.addon.addonType ?? 'addon' });
    if (a.single) add(api.normalize(a.addon.path), base, 'addon', 1);
    for (const f of a.files) add(api.normalize(f), `${base}/${placePath(f, a.addon.path, api)}`, 'addon', 1);
  }
  for (const d of deps) {
    for (const f of d.files) {
      const abs = api.normalize(f);
      const archive = place(abs);
      add(abs, archive, d.dep.kind ?? 'other', archive.startsWith(`${EXTERNAL_DIR}/`) ? 3 : 2);
    }
  }

  const { entries, alias, skipped } = resolveClashes([...planned.values()], opts.identity);
  const finalPlace = (abs: string) => alias.get(abs) ?? place(abs);
  return {
    root,
    entries,
    remaps: remapsFor(deps, api, place, finalPlace),
    missing: missingFor(deps, api),
    addons: manifestAddons,
    skipped,
    sceneFile,
  };
}

/** Refuses names no zip can hold, merges two paths of one file, and fails on two files with one name. */
function resolveClashes(candidates: Candidate[], identity?: (s: string) => string | undefined) {
  const alias = new Map<string, string>();
  const skipped: Layout['skipped'] = [];
  const groups = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const problem = archivePathProblem(c.path);
    if (problem)
      throw packFailed(`"${c.source}" cannot be stored in a zip as "${c.path}": ${problem}. Rename it and retry.`);
    if (clashKey(c.path) === clashKey(PACK_MANIFEST_NAME)) {
      skipped.push({
        source: c.source,
        reason: `${PACK_MANIFEST_NAME} is the packer's own manifest; the file of that name was left out`,
      });
      continue;
    }
    const g = groups.get(clashKey(c.path));
    if (g) g.push(c);
    else groups.set(clashKey(c.path), [c]);
  }
  const entries: PlannedEntry[] = [];
  for (const group of groups.values()) {
    group.sort((a, b) => a.priority - b.priority || cmp(a.source, b.source));
    const keep = group[0] as Candidate;
    for (const other of group.slice(1)) {
      const same = identity?.(keep.source);
      if (same === undefined || same !== identity?.(other.source)) {
        throw packFailed(
          `"${keep.source}" and "${other.source}" would both be stored as "${keep.path}" (their names differ ` +
            `only in letter case or Unicode form); rename one of them and retry.`,
        );
      }
      alias.set(other.source, keep.path);
      if (KIND_ORDER.indexOf(other.kind) < KIND_ORDER.indexOf(keep.kind)) keep.kind = other.kind;
    }
    entries.push({ path: keep.path, source: keep.source, kind: keep.kind });
  }
  entries.sort((a, b) => cmp(a.path, b.path));
  // A file where another entry needs a folder (a project file `_external/mnt` and an external `/mnt/a.png`).
  const fileKeys = new Set(entries.map((e) => clashKey(e.path)));
  fileKeys.add(clashKey(PACK_MANIFEST_NAME));
  for (const e of entries) {
    const parts = e.path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (fileKeys.has(clashKey(dir)))
        throw packFailed(
          `"${e.source}" would be stored under "${dir}/", but a file takes the name "${dir}"; rename one of ` +
            `them and retry.`,
        );
    }
  }
  return { entries, alias, skipped };
}

function remapsFor(
  deps: readonly ExpandedDependency[],
  api: PathApi,
  place: (abs: string) => string,
  finalPlace: (abs: string) => string,
): PathRemap[] {
  const out = new Map<string, PathRemap>();
  for (const { dep, files } of deps) {
    if (files.length === 0) continue;
    const abs = api.normalize(dep.absolute);
    let to: string;
    if (dep.pattern === 'udim') to = joinArchive(place(api.dirname(abs)), api.basename(abs));
    else if (dep.pattern === 'directory') to = place(abs);
    else to = finalPlace(abs);
    // The root itself cannot be named by an archive path (a cache folder that is the whole project).
    if (to === '') continue;
    const blendFile = finalPlace(api.normalize(dep.blendFile));
    if (dep.path.startsWith('//')) {
      const leads = joinArchive(blendFile.split('/').slice(0, -1).join('/'), dep.path.slice(2).replace(/\\/g, '/'));
      if (leads === to) continue;
    }
    out.set(`${blendFile}\0${dep.path}`, { from: dep.path, to, blendFile });
  }
  return [...out.values()].sort((a, b) => cmp(a.blendFile, b.blendFile) || cmp(a.from, b.from));
}

/** `dir/rel` normalised like a path in the archive ('..' when it leaves the archive). */
function joinArchive(dir: string, rel: string): string {
  return path.posix.normalize(dir === '' ? rel : `${dir}/${rel}`).replace(/\/$/, '');
}

function missingFor(deps: readonly ExpandedDependency[], api: PathApi): MissingFile[] {
  const out = new Map<string, MissingFile>();
  for (const { dep, missing } of deps) {
    for (const m of missing) {
      const resolved = api.normalize(m);
      const key = `${resolved}\0${dep.path}`;
      const prev = out.get(key);
      if (prev) prev.usedBy = [...new Set([...prev.usedBy, ...(dep.usedBy ?? [])])].sort(cmp).slice(0, MAX_USED_BY);
      else
        out.set(key, {
          path: dep.path,
          resolved,
          kind: dep.kind,
          usedBy: [...new Set(dep.usedBy ?? [])].sort(cmp).slice(0, MAX_USED_BY),
        });
    }
  }
  return [...out.values()].sort((a, b) => cmp(a.resolved, b.resolved) || cmp(a.path, b.path));
}

export function packFailed(message: string, metadata: Record<string, unknown> = {}): DaemonError {
  return new DaemonError('PACK_FAILED', message, metadata);
}
