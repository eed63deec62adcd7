// Validation: unpack the upload safely, pick the scene file, analyse it in Blender, and move
// the job to `validated` (or `failed` with the blocking warnings).
import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Analysis } from '../../../shared/api/analysis.js';
import type { Job } from '../../../shared/api/job.js';
import { analyzeScene } from '../../../blender/analysis/analyze-scene.js';
import { moveJob, stoppedJobInternal } from '../../domain/job-lifecycle.js';
import { pickBuild } from '../../../blender/builds.js';
import type { WorkerEnv } from '../runtime/env.js';
import { prepareProject, projectFilePath } from '../project/job-files.js';
import { FatalTaskError } from '../runtime/outcomes.js';
import type { TaskHandler } from '../runtime/runtime.js';
import { pickSceneFile, resolveBundledAddons } from '../project/project-files.js';
import { afterMoveFrom } from './await-move.js';
import { startRequeuedRender } from './requeue-render.js';

export function validateHandler(env: WorkerEnv): TaskHandler {
  return async (task, ctx) => {
    const rec = await afterMoveFrom(env.jobs, task.jobId, 'created', ctx.signal);
    // A requeued job validated by an attempt that died before its render was started or enqueued.
    if (rec?.internal.requeue && (rec.job.status === 'validated' || rec.job.status === 'booting')) return startRequeuedRender(env, rec, ctx.log);
    if (!rec || rec.job.status !== 'validating') return;
    const startedAt = new Date().toISOString();
    const vc = rec.internal.validationConfig ?? {};
    const project = await prepareProject(rec, {
      storage: env.storage,
      workRoot: env.settings.workRoot,
      signal: ctx.signal,
      fresh: true,
      blobCache: env.blobCache,
      ...(env.settings.unpackLimits ? { limits: env.settings.unpackLimits } : {}),
    });
    if (project.blobCache) ctx.log.info({ blobCache: project.blobCache }, 'project assembled from blobs');
    const scenePath = pickSceneFile(project.files, vc, project.manifest);
    const addons = resolveBundledAddons(project.manifest, vc.addonsToUse, vc.bundledAddonPathsToUse, {
      root: project.root,
      files: project.files,
    });
    const addonsToUse = vc.addonsToUse ?? addons.map((a) => ({ id: a.id, name: a.name }));
    const { build } = pickBuild(env.builds);
    const file = projectFilePath(project, scenePath);
    const result = await analyzeScene({
      blender: build.binary,
      file,
      workDir: project.jobDir,
      signal: ctx.signal,
      timeoutMs: env.settings.analysisTimeoutMs,
      onLine: (stream, line) => ctx.taskLog?.line(stream, line),
      pathToFileForRender: scenePath,
      // A bare .blend is stored as scene.blend: answers show the name the client gave it.
      shownName: path.basename(scenePath),
      ...(vc.sceneToRender ? { scene: vc.sceneToRender } : {}),
      // Files the packer moved into the archive from outside the project (absolute paths).
      pathRemaps: { root: project.root, remaps: project.manifest?.remaps ?? [] },
      // `output.addons` describes this file: what its data needs, attributed to the pack's add-ons or
      // Blender's own, plus every bundled one; those the render will not enable get ADDON_REQUIRED.
      addons: {
        bundled: (project.manifest?.addons ?? []).map((a) => ({ id: a.id, path: path.join(project.root, ...a.path.split('/')) })),
        selected: [...addonsToUse.map((a) => a.id), ...addons.map((a) => a.id)],
      },
    });
    if (result.remap) ctx.log.info({ remap: result.remap }, 'packed paths remapped');
    const finishedAt = new Date().toISOString();
    // Blender names missing files by their absolute path on this worker
    // (`<workRoot>/<jobId>/project/textures/x.png`): show them as the client knows them, relative
    // to its upload; the worker's folders mean nothing to the client and are not its business.
    const report = result.output.hostMissingFilesReport;
    if (report) result.output.hostMissingFilesReport = report.map((line) => line.split(project.root + path.sep).join(''));
    const blocking = result.warnings.filter((w) => w.blocking);
    const sceneName = vc.sceneToRender ?? result.output.scenes?.find((s) => s.is_active)?.name;
    const analysis: Analysis = {
      id: randomUUID(),
      fsNodeId: rec.job.sceneFile?.id ?? randomUUID(),
      type: 'scene_file',
      status: blocking.length ? 'failed' : 'completed',
      config: {
        pathToFileForRender: scenePath,
        ...(sceneName ? { sceneToRender: sceneName } : {}),
        addonsToUse,
        bundledAddonPathsToUse: addons.map((a) => a.relativePath),
      },
      output: result.output,
      startedAt,
      finishedAt,
      deletedAt: null,
      createdAt: startedAt,
      updatedAt: finishedAt,
    };
    const size = (await stat(file)).size;
    const rootFolderId = rec.job.rootFolderId ?? randomUUID();
    const sceneFile: NonNullable<Job['sceneFile']> = {
      id: analysis.fsNodeId,
      name: path.basename(scenePath),
      parentId: rootFolderId,
      rootFolderId,
      isSceneFile: true,
      isDeleted: false,
      isFolder: false,
      size: String(size),
      createdAt: rec.job.sceneFile?.createdAt ?? startedAt,
      updatedAt: finishedAt,
      scheduledForDeletionAt: null,
    };
    const patch = { analysis, analysisId: analysis.id, sceneFile, rootFolderId };
    ctx.log.info({ scenePath, warnings: result.warnings.map((w) => w.code), ms: result.durationMs }, 'scene analysed');
    if (blocking.length) {
      const reason = new FatalTaskError({
        name: 'SCENE_NOT_RENDERABLE',
        type: 'VALIDATION_FAILED',
        errorDetails: {
          message: `The scene cannot be rendered: ${blocking.map((w) => w.message).join('; ')}`,
          warnings: blocking,
        },
      });
      // Keep the analysis so the client can see every warning, not only the blocking ones.
      await moveJob(env.jobs, rec.job.id, 'rejectScene', { ...patch, failedReason: reason.failedReason }, stoppedJobInternal(env.settings.outputRetentionDays));
      return;
    }
    const validated = await moveJob(env.jobs, rec.job.id, 'markValidated', patch, {
      validationConfig: { ...vc, pathToFileForRender: scenePath, ...(sceneName ? { sceneToRender: sceneName } : {}) },
    });
    if (validated) await startRequeuedRender(env, validated, ctx.log);
  };
}
