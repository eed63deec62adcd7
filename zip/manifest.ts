// The packer's manifest (shared/pack/manifest.ts) as the unpacker reads it from an archive's
// root: parsed, checked, and its paths put in the unpacker's normal form, so that the worker
// compares them with the unpacked files as they are.
import { readFile } from 'node:fs/promises';
import { MAX_MANIFEST_BYTES, PACK_MANIFEST_NAME, PackManifest } from '../shared/pack/manifest.js';
import { UnpackError } from './errors.js';
import { normaliseRelativePath } from './rules.js';

/** Parses the manifest's text; a broken manifest is an UnpackError (the packer wrote it, so it must be valid). */
export function parseManifest(text: string): PackManifest {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UnpackError('ZIP_BAD_MANIFEST', `${PACK_MANIFEST_NAME} is not valid JSON.`);
  }
  const r = PackManifest.safeParse(json);
  if (!r.success) {
    throw new UnpackError('ZIP_BAD_MANIFEST', `${PACK_MANIFEST_NAME} does not match the expected shape.`, {
      issues: r.error.issues.slice(0, 20).map((i) => `${i.path.join('.')}: ${i.message}`),
    });
  }
  // Archive paths compare in the unpacker's normal form.
  const norm = (p: string): string => normaliseRelativePath(p) ?? p;
  return {
    ...r.data,
    sceneFile: norm(r.data.sceneFile),
    addons: r.data.addons.map((a) => ({ ...a, path: norm(a.path) })),
    remaps: r.data.remaps.map((m) => ({ ...m, to: norm(m.to), blendFile: norm(m.blendFile) })),
  };
}

/** Reads and parses an unpacked manifest file; one over MAX_MANIFEST_BYTES is refused unread. */
export async function readManifest(file: string): Promise<PackManifest> {
  const text = await readFile(file);
  if (text.length > MAX_MANIFEST_BYTES)
    throw new UnpackError('ZIP_BAD_MANIFEST', `${PACK_MANIFEST_NAME} is larger than ${MAX_MANIFEST_BYTES} bytes.`);
  return parseManifest(text.toString('utf8'));
}
