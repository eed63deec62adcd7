// A pack of the user's own .zip: inspected (its scenes, manifest and add-ons), never repacked,
// and uploaded as the user made it; the packer (packer.ts) never deletes it on discard().
import { stat } from 'node:fs/promises';
import type { DaemonWarning, PackRequest, PackResult } from '../../shared/daemon/submission-schemas.js';
import { DaemonError } from '../errors.js';
import { summariseZip } from './preflight.js';

/** The PackResult of the zip at `source` (no files of its own: the zip is sent whole). */
export async function packOwnZip(packId: string, source: string, req: PackRequest): Promise<PackResult> {
  const s = await stat(source).catch(() => null);
  if (!s?.isFile())
    throw new DaemonError('PACK_FAILED', `"${source}" does not exist or is not a file; check the path and retry.`, {
      file: source,
    });
  const summary = await summariseZip(source, req.addons);
  const warnings: DaemonWarning[] = [];
  const scenes = summary.preflight.blendFiles;
  if (scenes.length === 0)
    throw new DaemonError('PACK_FAILED', `"${source}" holds no .blend file; add the scene to the zip and retry.`, {
      file: source,
    });
  const sceneFile = summary.manifest?.sceneFile ?? (scenes.length === 1 ? (scenes[0] as string) : '');
  if (sceneFile === '')
    warnings.push({
      code: 'SCENE_FILE_AMBIGUOUS',
      message:
        `The zip holds several .blend files (${scenes.join(', ')}); choose one with ` +
        'validationConfig.pathToFileForRender.',
    });
  return {
    packId,
    sourcePath: source,
    zipPath: source,
    files: [],
    bytes: s.size,
    fileCount: summary.fileCount,
    sceneFile,
    preflight: summary.preflight,
    missing: summary.manifest?.missing ?? [],
    remaps: summary.manifest?.remaps ?? [],
    warnings,
  };
}
