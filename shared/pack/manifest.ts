// The packer's manifest: written by the daemon at the root of every project zip, read by the
// worker. It names the scene file, every packed file with its origin and checksum, how paths
// from outside the project were placed (so the worker can point the .blend at them), what was
// missing when packing, and the bundled add-ons.
import { z } from 'zod';

/** File name of the manifest, at the root of the archive. */
export const PACK_MANIFEST_NAME = 'renderbridge-manifest.json';

/** A manifest bigger than this is not one the packer wrote (about 60,000 entries). */
export const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

/** Folder of the archive that holds files from outside the project folder (absolute paths, other drives). */
export const EXTERNAL_DIR = '_external';

/**
 * True for a `/`-separated path that stays inside the archive: not absolute, no drive letter,
 * no `..`, `.` or empty segment, no backslash or control character.
 */
export function isArchivePath(p: string): boolean {
  // eslint-disable-next-line no-control-regex
  if (p === '' || /[\u0000-\u001f\u007f\\]/.test(p) || p.startsWith('/') || /^[a-zA-Z]:/.test(p)) return false;
  return p.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

export const ArchivePath = z
  .string()
  .min(1)
  .max(4096)
  .refine(isArchivePath, 'a relative path inside the archive (no "..", no leading "/")');

/** What kind of data block (or tool) needed a file. */
export const DependencyKind = z.enum([
  'blend',
  'image',
  'library',
  'sound',
  'font',
  'movieclip',
  'cache',
  'volume',
  'text',
  'addon',
  'other',
]);
export type DependencyKind = z.infer<typeof DependencyKind>;

export const ManifestEntry = z.object({
  /** Where the file is in the archive. */
  path: ArchivePath,
  /** Absolute path on the packing machine (for people reading the manifest; the worker never opens it). */
  source: z.string().max(4096),
  size: z.int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  kind: DependencyKind,
  /** False when the packer stored the bytes instead of deflating them (already compressed data). */
  deflated: z.boolean(),
});
export type ManifestEntry = z.infer<typeof ManifestEntry>;

/**
 * A path as written in a .blend that does not resolve inside the project by itself (absolute,
 * or relative but leading out of the packed tree), and where its file (or pattern) now is.
 * `from` is the exact string the data block holds; `to` may keep `<UDIM>` or `#` patterns.
 */
export const PathRemap = z.object({
  from: z.string().min(1).max(4096),
  to: ArchivePath,
  /** The .blend (archive path) whose data block holds `from`; relative `from` paths resolve against it. */
  blendFile: ArchivePath,
});
export type PathRemap = z.infer<typeof PathRemap>;

export const MissingFile = z.object({
  /** The path as written in the .blend (or given by the caller). */
  path: z.string().max(4096),
  /** Where the packer looked. */
  resolved: z.string().max(4096),
  kind: DependencyKind,
  /** Data blocks that use it (`IMimage.png`, `LIlib.blend`...). */
  usedBy: z.array(z.string().max(1024)).max(1000).default([]),
});
export type MissingFile = z.infer<typeof MissingFile>;

export const ManifestAddon = z.object({
  /** Python module name Blender enables. */
  id: z.string().min(1).max(1024),
  name: z.string().max(1024),
  /** Its folder or .py file in the archive. */
  path: ArchivePath,
  addonType: z.string().max(64).optional(),
});
export type ManifestAddon = z.infer<typeof ManifestAddon>;

export const PackManifest = z.object({
  version: z.literal(1),
  /** The .blend to render, relative to the archive root. */
  sceneFile: ArchivePath,
  addons: z.array(ManifestAddon).max(1000).default([]),
  entries: z.array(ManifestEntry).max(200_000).default([]),
  remaps: z.array(PathRemap).max(200_000).default([]),
  missing: z.array(MissingFile).max(100_000).default([]),
  /** Packer name and version, e.g. `renderbridge-daemon/0.1.0`. */
  createdBy: z.string().max(256).optional(),
});
export type PackManifest = z.infer<typeof PackManifest>;
export type PackManifestInput = z.input<typeof PackManifest>;
