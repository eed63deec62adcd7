// The packer's manifest (shared/pack/manifest.ts) from a layout and each file's checksum: built
// once from the hashes for the content-addressed upload, and as the zip's last entry when zipping,
// so both carry the same document.
import type { Layout } from './layout.js';
import { MAX_MANIFEST_BYTES, PackManifest } from '../../shared/pack/manifest.js';
import { packFailed } from './layout.js';

/** One file as read: its archive path, real size, checksum and whether it is worth compressing. */
export interface CheckedFile {
  name: string;
  size: number;
  sha256: string;
  deflated: boolean;
}

export interface BuiltManifest {
  manifest: PackManifest;
  /** The JSON text as stored (in the zip and in the work folder). */
  bytes: Buffer;
}

/** The manifest of `layout` with `files` in the layout's order; PACK_FAILED when off its schema or too big. */
export function buildManifest(
  layout: Pick<Layout, 'entries' | 'sceneFile' | 'addons' | 'remaps' | 'missing'>,
  files: readonly CheckedFile[],
  createdBy: string,
): BuiltManifest {
  const planned = new Map(layout.entries.map((e) => [e.path, e]));
  const parsed = PackManifest.safeParse({
    version: 1,
    sceneFile: layout.sceneFile,
    addons: layout.addons,
    entries: files.map((f) => ({
      path: f.name,
      source: planned.get(f.name)?.source ?? '',
      size: f.size,
      sha256: f.sha256,
      kind: planned.get(f.name)?.kind ?? 'other',
      deflated: f.deflated,
    })),
    remaps: layout.remaps,
    missing: layout.missing,
    createdBy,
  });
  if (!parsed.success)
    throw packFailed(
      `The manifest does not match its schema (${parsed.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.')}: ${i.message}`)
        .join('; ')}); this is a packer bug, please report it.`,
    );
  const bytes = Buffer.from(`${JSON.stringify(parsed.data, null, 1)}\n`);
  if (bytes.length > MAX_MANIFEST_BYTES)
    throw packFailed(
      `The project has too many files for one manifest (${bytes.length} bytes, at ` +
        `most ${MAX_MANIFEST_BYTES}); pack fewer files.`,
    );
  return { manifest: parsed.data, bytes };
}
