// The Packer port (daemon/ports.ts): plans a project (a .blend with the dependencies the add-on
// sent or traced with headless Blender, or a folder as it is), checksums every file through the
// hash cache and writes the manifest into `<workDir>/<packId>/`: the content-addressed upload
// sends those files. zip() writes the archive on demand for a service without that upload, with
// the same manifest. A .zip is only inspected: it is uploaded as the user made it.
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DaemonWarning, PackedFile, PackRequest, PackResult } from '../../shared/daemon/api.js';
import { PACK_MANIFEST_NAME } from '../../shared/pack/manifest.js';
import { DaemonError } from '../errors.js';
import type { Packer, PackProgress, TraceFn } from '../ports.js';
import { chooseCompression, SAMPLE_BYTES } from './compressibility.js';
import { HashCache } from './hash-cache.js';
import { hashFiles } from './hash-files.js';
import { buildManifest, type BuiltManifest } from './manifest-build.js';
import { planFolder, planProject, writePack, type PackPlan } from './pack-project.js';
import { preflightOf, summariseZip } from './preflight.js';

export interface PackerDeps {
  /** Folder of each pack's manifest (`<packId>/`) and zip (`<packId>.zip`), created when missing. */
  workDir: string;
  /** Lists a .blend's dependencies when the request brings none. */
  trace: TraceFn;
  /** Packer name and version written in each manifest, e.g. `renderbridge-daemon/0.1.0`. */
  createdBy: string;
  /** Checksums of files packed before. Default: a cache in memory for this packer's life. */
  hashCache?: HashCache;
}

interface Kept {
  result: PackResult;
  /** False for the user's own zip, which discard() never deletes. */
  ours: boolean;
  plan?: PackPlan;
  manifest?: BuiltManifest;
  zipping?: Promise<string>;
}

export function createPacker(deps: PackerDeps): Packer {
  const packs = new Map<string, Kept>();
  const cache = deps.hashCache ?? new HashCache();
  const dirOf = (packId: string) => path.join(deps.workDir, packId);

  async function plan(req: PackRequest, source: string, warnings: DaemonWarning[], signal: AbortSignal | undefined, onProgress: PackProgress | undefined): Promise<PackPlan> {
    const s = await stat(source).catch(() => null);
    if (!s) throw new DaemonError('PACK_FAILED', `"${source}" does not exist; check the path (a .blend, a project folder or a .zip) and retry.`, { file: source });
    if (s.isDirectory()) return planFolder(source, req.addons ? { addons: req.addons } : {});
    if (!s.isFile() || !source.toLowerCase().endsWith('.blend')) {
      throw new DaemonError('PACK_FAILED', `"${source}" is not a .blend, a folder or a .zip; choose the scene file or its project folder.`, { file: source });
    }
    let dependencies = req.dependencies;
    if (!dependencies) {
      onProgress?.(0, 0, 'tracing');
      const traced = await deps.trace(source, signal ? { signal } : {});
      dependencies = traced.dependencies;
      warnings.push(...traced.warnings);
    }
    return planProject({ blendFile: source, dependencies, ...(req.addons ? { addons: req.addons } : {}) });
  }

  async function packOwnZip(packId: string, source: string, req: PackRequest): Promise<PackResult> {
    // The user's own zip: inspected, never repacked (and never deleted by discard()).
    const s = await stat(source).catch(() => null);
    if (!s?.isFile()) throw new DaemonError('PACK_FAILED', `"${source}" does not exist or is not a file; check the path and retry.`, { file: source });
    const summary = await summariseZip(source, req.addons);
    const warnings: DaemonWarning[] = [];
    const scenes = summary.preflight.blendFiles;
    if (scenes.length === 0) throw new DaemonError('PACK_FAILED', `"${source}" holds no .blend file; add the scene to the zip and retry.`, { file: source });
    const sceneFile = summary.manifest?.sceneFile ?? (scenes.length === 1 ? (scenes[0] as string) : '');
    if (sceneFile === '') warnings.push({ code: 'SCENE_FILE_AMBIGUOUS', message: `The zip holds several .blend files (${scenes.join(', ')}); choose one with validationConfig.pathToFileForRender.` });
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

  return {
    async pack(req, options = {}) {
      const packId = options.id ?? randomUUID();
      const source = path.resolve(req.path);
      if (source.toLowerCase().endsWith('.zip')) {
        const result = await packOwnZip(packId, source, req);
        packs.set(packId, { result, ours: false });
        return result;
      }
      const warnings: DaemonWarning[] = [];
      const planned = await plan(req, source, warnings, options.signal, options.onProgress);
      warnings.push(...planned.warnings);
      const hashed = await hashFiles(planned.files, {
        cache,
        ...(options.signal ? { signal: options.signal } : {}),
        onProgress: (done, total) => options.onProgress?.(done, total, 'hashing'),
      });
      // A failed save only costs the next pack some reading: the pack itself is complete.
      await cache.save().catch(() => undefined);
      const manifest = buildManifest(planned.layout, hashed.map((h) => ({ name: h.name, size: h.size, sha256: h.sha256, deflated: h.deflate })), deps.createdBy);
      const dir = dirOf(packId);
      const manifestPath = path.join(dir, PACK_MANIFEST_NAME);
      try {
        await mkdir(dir, { recursive: true });
        await writeFile(manifestPath, manifest.bytes);
      } catch (err) {
        await rm(dir, { recursive: true, force: true });
        throw new DaemonError('PACK_FAILED', `Writing "${manifestPath}" failed (${(err as Error).message}); check the free space and permissions of the daemon's work folder, then retry.`, { file: manifestPath });
      }
      const files: PackedFile[] = [
        ...hashed.map((h) => ({ path: h.name, source: h.source, sha256: h.sha256, size: h.size, compression: h.deflate ? ('gzip' as const) : ('none' as const) })),
        {
          path: PACK_MANIFEST_NAME,
          source: manifestPath,
          sha256: createHash('sha256').update(manifest.bytes).digest('hex'),
          size: manifest.bytes.length,
          compression: chooseCompression(PACK_MANIFEST_NAME, manifest.bytes.subarray(0, SAMPLE_BYTES)).deflate ? 'gzip' : 'none',
        },
      ];
      const result: PackResult = {
        packId,
        sourcePath: source,
        zipPath: null,
        files,
        bytes: files.reduce((n, f) => n + f.size, 0),
        fileCount: hashed.length,
        sceneFile: planned.layout.sceneFile,
        preflight: preflightOf(files.map((f) => f.path), manifest.manifest, req.addons),
        missing: manifest.manifest.missing,
        remaps: manifest.manifest.remaps,
        warnings,
      };
      packs.set(packId, { result, ours: true, plan: planned, manifest });
      return result;
    },

    get(packId) {
      return packs.get(packId)?.result;
    },

    zip(packId, options = {}) {
      const kept = packs.get(packId);
      if (!kept) return Promise.reject(new DaemonError('DAEMON_NOT_FOUND', `No pack ${packId}: it was submitted, discarded or expired; pack the project again.`, { packId }));
      if (kept.result.zipPath !== null) return Promise.resolve(kept.result.zipPath);
      const { plan: planned, manifest } = kept;
      if (!planned || !manifest) return Promise.reject(new DaemonError('PACK_FAILED', `Pack ${packId} has neither a zip nor a plan; pack the project again.`, { packId }));
      kept.zipping ??= (async () => {
        const zipPath = path.join(deps.workDir, `${packId}.zip`);
        try {
          await writePack(planned, {
            zipPath,
            createdBy: deps.createdBy,
            manifest,
            ...(options.signal ? { signal: options.signal } : {}),
            onProgress: (done, total) => options.onProgress?.(done, total, 'zipping'),
          });
        } finally {
          kept.zipping = undefined;
        }
        // Discarded while zipping: the zip has no owner left.
        if (packs.get(packId) !== kept) {
          await rm(zipPath, { force: true });
          throw new DaemonError('DAEMON_NOT_FOUND', `Pack ${packId} was discarded while it was being zipped; pack the project again.`, { packId });
        }
        kept.result = { ...kept.result, zipPath };
        return zipPath;
      })();
      return kept.zipping;
    },

    async discard(packId) {
      const pack = packs.get(packId);
      packs.delete(packId);
      if (!pack?.ours) return;
      if (pack.result.zipPath !== null) await rm(pack.result.zipPath, { force: true });
      await rm(dirOf(packId), { recursive: true, force: true });
    },
  };
}
