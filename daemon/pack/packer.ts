// The Packer port (daemon/ports.ts): turns POST /pack requests into zips under the work folder
// and keeps their results until they are submitted or discarded. A .blend is packed with the
// dependencies the add-on sent (or traced with headless Blender), a folder as it is, and a .zip
// is only inspected: it is uploaded as the user made it.
import { randomUUID } from 'node:crypto';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DaemonWarning, PackRequest, PackResult } from '../../shared/daemon/api.js';
import { DaemonError } from '../errors.js';
import type { Packer, TraceFn } from '../ports.js';
import { summariseZip } from './preflight.js';
import { packFolder, packProject, type PackOutcome } from './pack-project.js';

export interface PackerDeps {
  /** Folder the zips are written to, as `<packId>.zip` (created when missing). */
  workDir: string;
  /** Lists a .blend's dependencies when the request brings none. */
  trace: TraceFn;
  /** Packer name and version written in each manifest, e.g. `renderbridge-daemon/0.1.0`. */
  createdBy: string;
}

export function createPacker(deps: PackerDeps): Packer {
  const packs = new Map<string, { result: PackResult; ours: boolean }>();

  async function packPath(req: PackRequest, zipPath: string, options: { signal?: AbortSignal; onProgress?: (done: number, total: number) => void }) {
    const source = path.resolve(req.path);
    const s = await stat(source).catch(() => null);
    if (!s) throw new DaemonError('PACK_FAILED', `"${source}" does not exist; check the path (a .blend, a project folder or a .zip) and retry.`, { file: source });
    const common = { zipPath, createdBy: deps.createdBy, ...options };
    if (s.isDirectory()) return { outcome: await packFolder(source, { ...common, ...(req.addons ? { addons: req.addons } : {}) }), warnings: [] };
    const lower = source.toLowerCase();
    if (!s.isFile() || !lower.endsWith('.blend')) {
      throw new DaemonError('PACK_FAILED', `"${source}" is not a .blend, a folder or a .zip; choose the scene file or its project folder.`, { file: source });
    }
    let dependencies = req.dependencies;
    const warnings: DaemonWarning[] = [];
    if (!dependencies) {
      const traced = await deps.trace(source, options.signal ? { signal: options.signal } : {});
      dependencies = traced.dependencies;
      warnings.push(...traced.warnings);
    }
    const outcome = await packProject({ blendFile: source, dependencies, ...(req.addons ? { addons: req.addons } : {}) }, common);
    return { outcome, warnings };
  }

  return {
    async pack(req, options = {}) {
      const packId = randomUUID();
      const source = path.resolve(req.path);
      if (source.toLowerCase().endsWith('.zip')) {
        // The user's own zip: inspected, never repacked (and never deleted by discard()).
        const s = await stat(source).catch(() => null);
        if (!s?.isFile()) throw new DaemonError('PACK_FAILED', `"${source}" does not exist or is not a file; check the path and retry.`, { file: source });
        const summary = await summariseZip(source, req.addons);
        const warnings: DaemonWarning[] = [];
        const scenes = summary.preflight.blendFiles;
        if (scenes.length === 0) throw new DaemonError('PACK_FAILED', `"${source}" holds no .blend file; add the scene to the zip and retry.`, { file: source });
        const sceneFile = summary.manifest?.sceneFile ?? (scenes.length === 1 ? (scenes[0] as string) : '');
        if (sceneFile === '') warnings.push({ code: 'SCENE_FILE_AMBIGUOUS', message: `The zip holds several .blend files (${scenes.join(', ')}); choose one with validationConfig.pathToFileForRender.` });
        const result: PackResult = {
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
        packs.set(packId, { result, ours: false });
        return result;
      }
      await mkdir(deps.workDir, { recursive: true });
      const zipPath = path.join(deps.workDir, `${packId}.zip`);
      const { outcome, warnings } = await packPath(req, zipPath, options);
      const result = await toResult(packId, outcome, [...warnings, ...outcome.warnings], req).catch(async (err: unknown) => {
        await rm(zipPath, { force: true });
        throw err;
      });
      packs.set(packId, { result, ours: true });
      return result;
    },

    get(packId) {
      return packs.get(packId)?.result;
    },

    async discard(packId) {
      const pack = packs.get(packId);
      packs.delete(packId);
      if (pack?.ours && pack.result.zipPath !== null) await rm(pack.result.zipPath, { force: true });
    },
  };
}

async function toResult(packId: string, outcome: PackOutcome, warnings: DaemonWarning[], req: PackRequest): Promise<PackResult> {
  const { preflight } = await summariseZip(outcome.zipPath, req.addons);
  return {
    packId,
    sourcePath: path.resolve(req.path),
    zipPath: outcome.zipPath,
    files: [],
    bytes: outcome.bytes,
    fileCount: outcome.fileCount,
    sceneFile: outcome.sceneFile,
    preflight,
    missing: outcome.manifest.missing,
    remaps: outcome.manifest.remaps,
    warnings,
  };
}
