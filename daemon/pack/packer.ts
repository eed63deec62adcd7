// The Packer port (daemon/ports.ts): plans a project (a .blend with the dependencies the add-on
// sent or traced with headless Blender, or a folder as it is), takes a snapshot of its files into
// `<workDir>/<packId>/files/` (snapshot.ts: .blend files copied, the others hard-linked),
// checksums them through the hash cache (both in snapshot-hash.ts) and writes the manifest beside
// them: the content-addressed upload sends the snapshot (uploadSource), so what was packed is what
// renders however the artist's files change meanwhile. zip() writes the archive on demand for a
// service without that upload, from the same snapshot and manifest. A .zip is only inspected
// (own-zip.ts): it is uploaded as the user made it.
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DaemonWarning, PackedFile, PackRequest, PackResult } from '../../shared/daemon/submission-schemas.js';
import { PACK_MANIFEST_NAME } from '../../shared/pack/manifest.js';
import { DaemonError } from '../errors.js';
import type { Packer, PackProgress, TraceFn, UploadSource } from '../ports.js';
import { chooseCompression, SAMPLE_BYTES } from './compressibility.js';
import { HashCache } from './hash-cache.js';
import { buildManifest, type BuiltManifest } from './manifest-build.js';
import { planFolder, planProject, writePack, type PackPlan } from './pack-project.js';
import { packOwnZip } from './own-zip.js';
import { preflightOf } from './preflight.js';
import { CopyBudget, type Snapshot } from './snapshot.js';
import type { SnapshotFile } from './snapshot-file.js';
import { type HashedFile, snapshotAndHash, uploadSourceOf } from './snapshot-hash.js';

export interface PackerDeps {
  /** Folder of each pack's manifest (`<packId>/`) and zip (`<packId>.zip`), created when missing. */
  workDir: string;
  /** Lists a .blend's dependencies when the request brings none. */
  trace: TraceFn;
  /** Packer name and version written in each manifest, e.g. `renderbridge-daemon/0.1.0`. */
  createdBy: string;
  /** Checksums of files packed before. Default: a cache in memory for this packer's life. */
  hashCache?: HashCache;
  /**
   * Most bytes the snapshots of the kept packs, and of the packs being taken, may hold as real
   * copies (.blend files on a filesystem without reflinks), however many packs run at once; a
   * pack past it fails with PACK_FAILED. Default 16 GiB.
   */
  maxCopiedBytes?: number;
}

/** Default of PackerDeps.maxCopiedBytes: several big scenes waiting at once, far below a project's size. */
export const DEFAULT_MAX_COPIED_BYTES = 16 * 1024 ** 3;

interface Kept {
  result: PackResult;
  /** False for the user's own zip, which discard() never deletes. */
  ours: boolean;
  plan?: PackPlan;
  manifest?: BuiltManifest;
  snapshot?: Snapshot;
  upload?: UploadSource;
  zipping?: Promise<string>;
}

/** What a packer leaves in its work folder: `<packId>/`, `<packId>.zip`, `<packId>.zip.partial-<uuid>`. */
const LEFT_BEHIND = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(\.zip(\.partial-[0-9a-f-]+)?)?$/;

export function createPacker(deps: PackerDeps): Packer {
  const packs = new Map<string, Kept>();
  const cache = deps.hashCache ?? new HashCache();
  const dirOf = (packId: string) => path.join(deps.workDir, packId);
  // Shared by every pack at once: each copy takes its bytes before it is written.
  const budget = new CopyBudget(deps.maxCopiedBytes ?? DEFAULT_MAX_COPIED_BYTES);
  // The copy a kept pack holds of a .blend, taken when the file had the stat it has now.
  const keptCopy = (f: PackPlan['files'][number]): SnapshotFile | undefined => {
    for (const k of packs.values()) {
      const hit = k.snapshot?.files.find(
        (s) =>
          s.source === f.source &&
          (s.how === 'copy' || s.how === 'reflink') &&
          s.taken.size === f.size &&
          s.taken.mtimeNs === f.mtimeNs &&
          s.taken.identity === f.identity,
      );
      if (hit) return hit;
    }
    return undefined;
  };
  // Packs live in memory only: a pack folder or zip the work folder holds before this packer's
  // first pack was left by a daemon that stopped (or crashed), and is removed once, so copies never
  // pile up. Only names a packer writes (a UUID, its zip, a zip's partial file) are touched.
  let swept: Promise<void> | undefined;
  const sweep = () =>
    (swept ??= readdir(deps.workDir).then(
      (names) =>
        Promise.all(
          names
            .filter((n) => LEFT_BEHIND.test(n) && !packs.has(n.slice(0, 36)))
            .map((n) => rm(path.join(deps.workDir, n), { recursive: true, force: true })),
        ).then(() => undefined),
      () => undefined,
    ));

  async function plan(
    req: PackRequest,
    source: string,
    warnings: DaemonWarning[],
    signal: AbortSignal | undefined,
    onProgress: PackProgress | undefined,
  ): Promise<PackPlan> {
    const s = await stat(source).catch(() => null);
    if (!s)
      throw new DaemonError(
        'PACK_FAILED',
        `"${source}" does not exist; check the path (a .blend, a project folder or a .zip) and retry.`,
        { file: source },
      );
    if (s.isDirectory()) return planFolder(source, req.addons ? { addons: req.addons } : {});
    if (!s.isFile() || !source.toLowerCase().endsWith('.blend')) {
      throw new DaemonError(
        'PACK_FAILED',
        `"${source}" is not a .blend, a folder or a .zip; choose the scene file or its project folder.`,
        { file: source },
      );
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
      const dir = dirOf(packId);
      await sweep();
      let snapshot: Snapshot;
      let hashed: HashedFile[];
      try {
        ({ snapshot, hashed } = await snapshotAndHash(
          planned.files,
          path.join(dir, 'files'),
          { budget, reuse: keptCopy, cache },
          options,
        ));
      } catch (err) {
        // A folder that could not be made cannot be removed either (ENOTDIR): the first error is the one to tell.
        await rm(dir, { recursive: true, force: true }).catch(() => undefined);
        throw err;
      }
      // A failed save only costs the next pack some reading: the pack itself is complete.
      await cache.save().catch(() => undefined);
      const manifest = buildManifest(
        planned.layout,
        hashed.map((h) => ({ name: h.name, size: h.size, sha256: h.sha256, deflated: h.deflate })),
        deps.createdBy,
      );
      const manifestPath = path.join(dir, PACK_MANIFEST_NAME);
      try {
        await mkdir(dir, { recursive: true });
        await writeFile(manifestPath, manifest.bytes);
      } catch (err) {
        budget.give(snapshot.copiedBytes);
        await rm(dir, { recursive: true, force: true }).catch(() => undefined);
        throw new DaemonError(
          'PACK_FAILED',
          `Writing "${manifestPath}" failed (${(err as Error).message}); check the free space and ` +
            `permissions of the daemon's work folder, then retry.`,
          { file: manifestPath },
        );
      }
      const files: PackedFile[] = [
        ...hashed.map((h) => ({
          path: h.name,
          source: h.source,
          sha256: h.sha256,
          size: h.size,
          compression: h.deflate ? ('gzip' as const) : ('none' as const),
        })),
        {
          path: PACK_MANIFEST_NAME,
          source: manifestPath,
          sha256: createHash('sha256').update(manifest.bytes).digest('hex'),
          size: manifest.bytes.length,
          compression: chooseCompression(PACK_MANIFEST_NAME, manifest.bytes.subarray(0, SAMPLE_BYTES)).deflate
            ? 'gzip'
            : 'none',
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
        preflight: preflightOf(
          files.map((f) => f.path),
          manifest.manifest,
          req.addons,
        ),
        missing: manifest.manifest.missing,
        remaps: manifest.manifest.remaps,
        warnings,
      };
      // The zip, when one is asked for, reads the snapshot too.
      const snapPlan: PackPlan = {
        ...planned,
        files: planned.files.map((f, i) => ({ ...f, source: (snapshot.files[i] as SnapshotFile).path })),
      };
      packs.set(packId, {
        result,
        ours: true,
        plan: snapPlan,
        manifest,
        snapshot,
        upload: uploadSourceOf(files, snapshot),
      });
      return result;
    },

    get(packId) {
      return packs.get(packId)?.result;
    },

    uploadSource(packId) {
      return packs.get(packId)?.upload;
    },

    zip(packId, options = {}) {
      const kept = packs.get(packId);
      if (!kept)
        return Promise.reject(
          new DaemonError(
            'DAEMON_NOT_FOUND',
            `No pack ${packId}: it was submitted, discarded or expired; pack the project again.`,
            { packId },
          ),
        );
      if (kept.result.zipPath !== null) return Promise.resolve(kept.result.zipPath);
      const { plan: planned, manifest } = kept;
      if (!planned || !manifest)
        return Promise.reject(
          new DaemonError('PACK_FAILED', `Pack ${packId} has neither a zip nor a plan; pack the project again.`, {
            packId,
          }),
        );
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
          throw new DaemonError(
            'DAEMON_NOT_FOUND',
            `Pack ${packId} was discarded while it was being zipped; pack the project again.`,
            { packId },
          );
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
      budget.give(pack.snapshot?.copiedBytes ?? 0);
      if (pack.result.zipPath !== null) await rm(pack.result.zipPath, { force: true });
      await rm(dirOf(packId), { recursive: true, force: true });
    },
  };
}
