// Looks inside a finished (or the user's own) zip before upload: which scene files it holds and
// which add-ons its packer manifest bundles. The result is shown to the caller and sent with
// job creation as `uploadPreflight`. Reads the central directory and the manifest entry only.
import yauzl from 'yauzl';
import type { UploadPreflight } from '../../shared/api/upload.js';
import type { AddonToBundle } from '../../shared/pack/dependencies.js';
import { MAX_MANIFEST_BYTES, PACK_MANIFEST_NAME, PackManifest } from '../../shared/pack/manifest.js';
import { DaemonError } from '../errors.js';
import { nextEntry } from '../../zip/entries.js';
import { decodeEntryName } from '../../zip/entry-name.js';

export const PREFLIGHT_SCHEMA_VERSION = 1;

export interface ZipSummary {
  preflight: UploadPreflight;
  /** File entries, folders and the manifest not counted. */
  fileCount: number;
  /** The packer's manifest at the archive root, or null. */
  manifest: PackManifest | null;
}

/** The `uploadPreflight` of a zip; add-ons passed with `selected: false` are listed as not bundled. */
export async function inspectZip(zipPath: string, addons?: AddonToBundle[]): Promise<UploadPreflight> {
  return (await summariseZip(zipPath, addons)).preflight;
}

/** inspectZip plus what the packer needs besides: the file count and the parsed manifest. */
export async function summariseZip(zipPath: string, addons?: readonly AddonToBundle[]): Promise<ZipSummary> {
  const broken = (why: string) =>
    new DaemonError(
      'PACK_FAILED',
      `"${zipPath}" is not a usable zip: ${why}. Repack the project or choose another file.`,
      { file: zipPath },
    );
  let zip: yauzl.ZipFile;
  try {
    // decodeStrings off: names are decoded by decodeEntryName, exactly as the worker decodes them.
    zip = await yauzl.openPromise(zipPath, {
      lazyEntries: true,
      autoClose: false,
      decodeStrings: false,
      validateEntrySizes: true,
    });
  } catch (err) {
    throw broken((err as Error).message);
  }
  const pending: { error: Error | null } = { error: null };
  zip.on('error', (err: Error) => (pending.error ??= err));
  const names: string[] = [];
  let fileCount = 0;
  let manifest: PackManifest | null = null;
  try {
    for (;;) {
      let entry: yauzl.Entry | null;
      try {
        entry = await nextEntry(zip, pending);
      } catch (err) {
        throw broken((err as Error).message);
      }
      if (!entry) break;
      // Backslashes are Windows separators, as yauzl's default (non-strict) decoding had them.
      const name = decodeEntryName(entry).replace(/\\/g, '/');
      const invalid = yauzl.validateFileName(name);
      if (invalid !== null) throw broken(invalid);
      if (name.endsWith('/')) continue;
      names.push(name);
      if (name === PACK_MANIFEST_NAME) manifest = await readManifest(zip, entry, broken);
      else fileCount++;
    }
  } finally {
    zip.close();
  }
  return { preflight: preflightOf(names, manifest, addons), fileCount, manifest };
}

/**
 * The `uploadPreflight` of a project from its archive paths and packer manifest (what summariseZip
 * reads from a zip, or what the packer knows of a pack it hashed without zipping).
 */
export function preflightOf(
  names: readonly string[],
  manifest: PackManifest | null,
  addons?: readonly AddonToBundle[],
): UploadPreflight {
  const bundledAddons = manifest
    ? [
        ...manifest.addons.map((a) => ({
          bundledPathInPack: a.path,
          name: a.name,
          module: a.id,
          addonType: a.addonType ?? 'addon',
          selectedForBundle: true,
        })),
        // Known to the artist but left out of the archive: no path in the pack.
        ...(addons ?? [])
          .filter((a) => a.selected === false && !manifest.addons.some((m) => m.id === a.module))
          .map((a) => ({
            bundledPathInPack: '',
            name: a.name,
            module: a.module,
            addonType: a.addonType ?? 'addon',
            selectedForBundle: false,
          })),
      ]
    : [];
  return {
    schemaVersion: PREFLIGHT_SCHEMA_VERSION,
    source: 'client_zip_inspection',
    blendFiles: names.filter(isSceneFile).sort(),
    packerManifestPreview: manifest ? { manifestPath: PACK_MANIFEST_NAME, bundledAddons } : null,
  };
}

/** A scene candidate: `.blend`, not a `.blend1` backup, nothing from macOS metadata (`__MACOSX/`, `._x`). */
function isSceneFile(name: string): boolean {
  const parts = name.split('/');
  return name.toLowerCase().endsWith('.blend') && !parts.includes('__MACOSX') && !(parts.at(-1) ?? '').startsWith('._');
}

async function readManifest(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  broken: (why: string) => DaemonError,
): Promise<PackManifest> {
  const tooBig = () => broken(`${PACK_MANIFEST_NAME} is larger than ${MAX_MANIFEST_BYTES} bytes`);
  if (entry.uncompressedSize > MAX_MANIFEST_BYTES) throw tooBig();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    const stream = await zip.openReadStreamPromise(entry);
    // Counted on the real bytes: the header's size is only a claim.
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_MANIFEST_BYTES) {
        stream.destroy();
        throw tooBig();
      }
      chunks.push(chunk);
    }
  } catch (err) {
    throw err instanceof DaemonError ? err : broken(`${PACK_MANIFEST_NAME} cannot be read (${(err as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw broken(`${PACK_MANIFEST_NAME} is not valid JSON`);
  }
  const r = PackManifest.safeParse(json);
  if (!r.success)
    throw broken(
      `${PACK_MANIFEST_NAME} does not match the manifest schema (${r.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.')}: ${i.message}`)
        .join('; ')})`,
    );
  return r.data;
}
