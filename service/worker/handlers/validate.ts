// Validation: unpack the upload safely, pick the scene file, analyse it in Blender (or reuse the
// workspace's analysis of the same files and build: analysis-cache/), and move the job to
// `validated` (or `failed` with the blocking warnings).
import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Analysis } from '../../../shared/api/analysis.js';
import type { Job } from '../../../shared/api/job.js';
import type { JobInternal, JobRecord } from '../../ports/jobs.js';
import type { SceneAnalysis } from '../../../blender/analysis/analyze-scene.js';
import type { BlenderBuild } from '../../../blender/builds.js';
import { analyzeWithCache } from '../analysis-cache/cached-analysis.js';
import { moveJob, stoppedJobInternal } from '../../domain/job-lifecycle.js';
import { readBlendHeader } from '../../../blender/blend-header.js';
import { newTasks } from '../../domain/tasks.js';
import { scheduled } from '../../domain/scheduling.js';
import { routeBlender } from '../runtime/blender-route.js';
import type { WorkerEnv } from '../runtime/env.js';
import { prepareProject, projectFilePath, type PreparedProject } from '../project/job-files.js';
import { FatalTaskError } from '../runtime/outcomes.js';
import type { TaskHandler } from '../runtime/runtime.js';
import { pickSceneFile, resolveBundledAddons } from '../project/project-files.js';
import { addonRefusedWarning, refusedAddons } from '../project/addon-policy.js';
import { afterMoveFrom } from '../runtime/await-move.js';
import { startRequeuedRender } from '../render/requeue-render.js';

export function validateHandler(env: WorkerEnv): TaskHandler {
  return async (task, ctx) => {
    const rec = await afterMoveFrom(env.jobs, task.jobId, 'created', ctx.signal);
    // A requeued job validated by an attempt that died before its render was started or enqueued.
    if (rec?.internal.requeue && (rec.job.status === 'validated' || rec.job.status === 'booting'))
      return startRequeuedRender(env, rec, ctx.log);
    if (!rec || rec.job.status !== 'validating') return;
    const startedAt = new Date().toISOString();
    const vc = rec.internal.validationConfig ?? {};
    const limits = env.settings.unpackLimits ? { limits: env.settings.unpackLimits } : {};
    const project = await prepareProject(rec, {
      storage: env.storage,
      workRoot: env.settings.workRoot,
      signal: ctx.signal,
      fresh: true,
      blobCache: env.blobCache,
      ...limits,
    });
    if (project.blobCache) ctx.log.info({ blobCache: project.blobCache }, 'project assembled from blobs');
    const scenePath = pickSceneFile(project.files, vc, project.manifest);
    const chosen = chosenAddons(env, project, vc);
    const file = projectFilePath(project, scenePath);
    const build = await buildForFile(env, rec.job.id, file, ctx);
    if (!build) return;
    const workspaceId = rec.job.workspaceId;
    const result = await analyse(env, { project, vc, scenePath, file, build, chosen, workspaceId }, ctx);
    await recordAnalysis(env, rec, { result, vc, scenePath, file, startedAt, chosen }, ctx);
  };
}

type Ctx = Parameters<TaskHandler>[1];
type ValidationConfig = NonNullable<JobInternal['validationConfig']>;
type Chosen = ReturnType<typeof chosenAddons>;

/**
 * The Blender that opens the file, chosen before any Blender starts: a 5.x file is "not a blend file" to
 * 4.x and 3.x, and that opaque error must never reach the artist. Undefined when handed on to another worker.
 */
async function buildForFile(env: WorkerEnv, jobId: string, file: string, ctx: Ctx) {
  const header = await readBlendHeader(file);
  const route = await routeBlender(env, header);
  if (route.where === 'nowhere') {
    throw FatalTaskError.validation('BLENDER_VERSION_UNAVAILABLE', route.message, { fileVersion: header.text });
  }
  if (route.where === 'elsewhere') {
    ctx.log.info(
      { fileVersion: header.text, requires: route.requires },
      'validation handed on to a worker with a fitting Blender',
    );
    const here = env.builds.map((b) => b.version.text).join(', ');
    ctx.taskLog?.note(
      `The file was saved with Blender ${header.text}; this worker has ${here}: ` +
        'handed on to a worker that has a fitting build.',
    );
    await env.queue.enqueue(scheduled(newTasks.routed('validate', jobId, route.requires), ctx.job.job));
    return undefined;
  }
  return route.build;
}

interface AnalyseInput {
  project: PreparedProject;
  vc: ValidationConfig;
  scenePath: string;
  file: string;
  build: BlenderBuild;
  chosen: Chosen;
  workspaceId: string;
}

async function analyse(env: WorkerEnv, input: AnalyseInput, ctx: Ctx) {
  const { project, vc, scenePath, chosen, build } = input;
  const store = env.analysisCache;
  const cached = { store, workspaceId: input.workspaceId, build, project, log: ctx.log };
  const { analysis: result, cache } = await analyzeWithCache(cached, {
    blender: build.binary,
    file: input.file,
    workDir: project.jobDir,
    signal: ctx.signal,
    timeoutMs: env.settings.analysisTimeoutMs,
    sandbox: env.settings.sandbox,
    ...(env.settings.renderNice ? { nice: env.settings.renderNice } : {}),
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
      bundled: (project.manifest?.addons ?? []).map((a) => ({
        id: a.id,
        path: path.join(project.root, ...a.path.split('/')),
      })),
      selected: [...chosen.addonsToUse.map((a) => a.id), ...chosen.addons.map((a) => a.id)],
      refused: chosen.refused.length > 0,
    },
  });
  if (cache === 'hit') {
    ctx.log.info({ analysisCache: 'hit', build: build.version.text }, 'scene analysis reused');
    ctx.taskLog?.note(
      `Analysis reused: this workspace's analysis of the same .blend and add-on files, file paths and sizes ` +
        `with Blender ${build.version.text}; Blender was not started.`,
    );
  }
  if (chosen.refused.length > 0) result.warnings.push(addonRefusedWarning(chosen.refused));
  if (result.remap) ctx.log.info({ remap: result.remap }, 'packed paths remapped');
  // Blender names missing files by their absolute path on this worker
  // (`<workRoot>/<jobId>/project/textures/x.png`): show them as the client knows them, relative
  // to its upload; the worker's folders mean nothing to the client and are not its business.
  const report = result.output.hostMissingFilesReport;
  if (report) result.output.hostMissingFilesReport = report.map((line) => line.split(project.root + path.sep).join(''));
  return result;
}

interface Analysed {
  result: SceneAnalysis;
  vc: ValidationConfig;
  scenePath: string;
  file: string;
  startedAt: string;
  chosen: Chosen;
}

/** Moves the job to `validated`, or to `failed` with the blocking warnings, keeping the whole analysis. */
async function recordAnalysis(env: WorkerEnv, rec: JobRecord, analysed: Analysed, ctx: Ctx) {
  const { result, vc, scenePath, chosen } = analysed;
  const blocking = result.warnings.filter((w) => w.blocking);
  const sceneName = vc.sceneToRender ?? result.output.scenes?.find((s) => s.is_active)?.name;
  const config = {
    pathToFileForRender: scenePath,
    ...(sceneName ? { sceneToRender: sceneName } : {}),
    addonsToUse: chosen.addonsToUse,
    bundledAddonPathsToUse: chosen.addons.map((a) => a.relativePath),
  };
  const patch = await analysedJob(rec.job, {
    config,
    output: result.output,
    failed: blocking.length > 0,
    startedAt: analysed.startedAt,
    file: analysed.file,
    scenePath,
  });
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
    await moveJob(
      env.jobs,
      rec.job.id,
      'rejectScene',
      { ...patch, failedReason: reason.failedReason },
      stoppedJobInternal(env.settings.outputRetentionDays),
    );
    return;
  }
  const validated = await moveJob(env.jobs, rec.job.id, 'markValidated', patch, {
    validationConfig: { ...vc, pathToFileForRender: scenePath, ...(sceneName ? { sceneToRender: sceneName } : {}) },
  });
  if (validated) await startRequeuedRender(env, validated, ctx.log);
}

/** The add-ons the render enables: the project's bundled ones unless the policy refuses them. */
function chosenAddons(env: WorkerEnv, project: PreparedProject, vc: ValidationConfig) {
  const wanted = resolveBundledAddons(project.manifest, vc.addonsToUse, vc.bundledAddonPathsToUse, {
    root: project.root,
    files: project.files,
  });
  const refused = refusedAddons(env.settings.bundledAddons, wanted);
  const addons = refused.length > 0 ? [] : wanted;
  const bundledIds = new Set((project.manifest?.addons ?? []).map((a) => a.id));
  const addonsToUse =
    refused.length > 0
      ? (vc.addonsToUse ?? []).filter((a) => !bundledIds.has(a.id))
      : (vc.addonsToUse ?? addons.map((a) => ({ id: a.id, name: a.name })));
  return { refused, addons, addonsToUse };
}

interface AnalysedScene {
  config: Analysis['config'];
  output: Analysis['output'];
  /** A blocking warning: the scene cannot be rendered. */
  failed: boolean;
  startedAt: string;
  /** The scene file on this worker, and as the client named it in its upload. */
  file: string;
  scenePath: string;
}

/** The job's analysis and its scene file's node, as the spec's answers show them. */
async function analysedJob(
  job: Job,
  a: AnalysedScene,
): Promise<Pick<Job, 'analysis' | 'analysisId' | 'sceneFile' | 'rootFolderId'>> {
  const finishedAt = new Date().toISOString();
  const analysis: Analysis = {
    id: randomUUID(),
    fsNodeId: job.sceneFile?.id ?? randomUUID(),
    type: 'scene_file',
    status: a.failed ? 'failed' : 'completed',
    config: a.config,
    output: a.output,
    startedAt: a.startedAt,
    finishedAt,
    deletedAt: null,
    createdAt: a.startedAt,
    updatedAt: finishedAt,
  };
  const rootFolderId = job.rootFolderId ?? randomUUID();
  const sceneFile: NonNullable<Job['sceneFile']> = {
    id: analysis.fsNodeId,
    name: path.basename(a.scenePath),
    parentId: rootFolderId,
    rootFolderId,
    isSceneFile: true,
    isDeleted: false,
    isFolder: false,
    size: String((await stat(a.file)).size),
    createdAt: job.sceneFile?.createdAt ?? a.startedAt,
    updatedAt: finishedAt,
    scheduledForDeletionAt: null,
  };
  return { analysis, analysisId: analysis.id, sceneFile, rootFolderId };
}
