// Choices inside an unpacked project: which .blend to render, and which bundled add-ons to
// enable. The daemon's packer writes a manifest (PACK_MANIFEST_NAME at the archive root) naming
// the scene file and the add-ons it bundled (zip/manifest.ts reads it); projects zipped by hand
// have none. Pure. Refusals are zip/'s UnpackError: to the client they are upload refusals too.
import { posix } from 'node:path';
import type { PackManifest } from '../../../shared/pack/manifest.js';
import { UnpackError } from '../../../zip/errors.js';
import { normaliseRelativePath } from '../../../zip/rules.js';

/** Scene files to choose from: `.blend` (not `.blend1` backups), none from macOS metadata (`__MACOSX/`, `._x`). */
export function sceneFileCandidates(files: readonly string[]): string[] {
  return files
    .filter((f) => f.toLowerCase().endsWith('.blend'))
    .filter((f) => !f.split('/').includes('__MACOSX') && !posix.basename(f).startsWith('._'))
    .sort();
}

/**
 * The scene file to render, as a path relative to the project root. Order: the client's
 * `pathToFileForRender` (normalised; it must be one of the .blend files), then the manifest's
 * `sceneFile`, then the only .blend. Several and none chosen, or none at all, is an error that
 * lists the choices.
 */
export function pickSceneFile(
  files: readonly string[],
  validationConfig?: { pathToFileForRender?: string | undefined } | null,
  manifest?: PackManifest | null,
): string {
  const choices = sceneFileCandidates(files);
  const byKey = new Map(choices.map((c) => [c.normalize('NFC'), c]));
  const requested = validationConfig?.pathToFileForRender;
  if (requested !== undefined) {
    const n = normaliseRelativePath(requested);
    const hit = n === null ? undefined : byKey.get(n.normalize('NFC'));
    if (!hit) {
      throw new UnpackError(
        'SCENE_FILE_NOT_FOUND',
        `pathToFileForRender "${requested}" is not a .blend file in the upload; choose one of: ${list(choices)}`,
        {
          requested,
          choices,
        },
      );
    }
    return hit;
  }
  const fromManifest = manifest ? byKey.get(manifest.sceneFile.normalize('NFC')) : undefined;
  if (fromManifest) return fromManifest;
  if (choices.length === 1) return choices[0] as string;
  if (choices.length === 0) {
    throw new UnpackError('SCENE_FILE_MISSING', 'The upload contains no .blend file.', {
      files: files.slice(0, 50),
      fileCount: files.length,
    });
  }
  throw new UnpackError(
    'SCENE_FILE_AMBIGUOUS',
    `The upload contains several .blend files; set validationConfig.pathToFileForRender to one of: ${list(choices)}`,
    { choices },
  );
}

export interface ResolvedAddon {
  /** Module name to enable. */
  id: string;
  name: string;
  /** Path relative to the project root, `/`-separated. */
  relativePath: string;
  /** Absolute path inside the job folder (`root` joined with `relativePath`). */
  path: string;
}

/**
 * Bundled add-ons to install and enable: those named by `bundledAddonPathsToUse` (paths in the
 * archive; each must be an add-on of the manifest) plus those whose module id is in
 * `addonsToUse`. With neither given, every add-on the packer bundled. `addonsToUse` ids that are
 * not bundled are Blender's own add-ons: not returned here, the caller enables them by id.
 * When `files` is given, each add-on must exist in the project (a file, or a folder of files).
 */
export function resolveBundledAddons(
  manifest: PackManifest | null | undefined,
  addonsToUse: readonly { id: string; name?: string }[] | undefined,
  bundledAddonPathsToUse: readonly string[] | undefined,
  opts: { root: string; files?: readonly string[] },
): ResolvedAddon[] {
  const bundled = manifest?.addons ?? [];
  const validPaths = bundled.map((a) => a.path);
  const selected = new Map<string, PackManifest['addons'][number]>();
  if (addonsToUse === undefined && bundledAddonPathsToUse === undefined) {
    for (const a of bundled) selected.set(a.path, a);
  }
  const unknown: string[] = [];
  for (const p of bundledAddonPathsToUse ?? []) {
    const n = normaliseRelativePath(p);
    const hit = n === null ? undefined : bundled.find((a) => a.path.normalize('NFC') === n.normalize('NFC'));
    if (hit) selected.set(hit.path, hit);
    else unknown.push(p);
  }
  if (unknown.length > 0) {
    throw new UnpackError(
      'ADDON_PATH_UNKNOWN',
      `Unknown bundled add-on path(s): ${list(unknown)}; the upload bundles: ${list(validPaths)}`,
      {
        unknown,
        choices: validPaths,
      },
    );
  }
  for (const ref of addonsToUse ?? []) {
    const hit = bundled.find((a) => a.id === ref.id);
    if (hit) selected.set(hit.path, hit);
  }
  const present = opts.files ? new Set(opts.files.map((f) => f.normalize('NFC'))) : null;
  const missing = [...selected.keys()].filter(
    (p) =>
      present && !present.has(p.normalize('NFC')) && ![...present].some((f) => f.startsWith(`${p.normalize('NFC')}/`)),
  );
  if (missing.length > 0) {
    throw new UnpackError('ADDON_MISSING', `The manifest lists add-on(s) missing from the upload: ${list(missing)}`, {
      missing,
    });
  }
  return [...selected.values()].map((a) => ({
    id: a.id,
    name: a.name,
    relativePath: a.path,
    path: posix.join(opts.root, a.path),
  }));
}

function list(items: readonly string[]): string {
  if (items.length === 0) return '(none)';
  return items.length > 20 ? `${items.slice(0, 20).join(', ')}, ... (${items.length} in all)` : items.join(', ');
}
