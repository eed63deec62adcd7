// Finalize: the job's finished files become its outputs (files, zips, MP4, preview) and the
// job moves to `completed`, which is when clients first see them. A job canceled meanwhile
// publishes nothing: what was stored is deleted again.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { expandFrameRanges } from '../../domain/frame-ranges.js';
import { moveJob } from '../../domain/job-lifecycle.js';
import { finalConfigFromRuns, normalizedSeconds } from '../../domain/normalized-seconds.js';
import { filesOfFrame, listFiles, outputLayout, type OutputLayout } from '../outputs/chunk-files.js';
import { compositeFolders } from '../../../blender/render/render-settings.js';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import type { JobRecord } from '../../ports/jobs.js';
import type { WorkerEnv } from '../runtime/env.js';
import { deleteUnpublished, finalizeOutputs, type ProducedFile } from '../outputs/finalize-outputs.js';
import { damagedFiles } from '../outputs/frame-integrity.js';
import { unchangedEarlyOutputs } from '../outputs/early-outputs.js';
import { FrameStaging, readRunsFile, RENDER_SECONDS_FILE, stagingPrefix } from '../outputs/frame-staging.js';
import { jobDirOf, removeJobDir } from '../project/job-files.js';
import { FatalTaskError } from '../runtime/outcomes.js';
import { jobOutputPrefix } from '../../domain/output-keys.js';
import type { TaskHandler } from '../runtime/runtime.js';
import { ProgressTracker } from '../render/progress-tracker.js';

/** What the render left in `out/`: camera files with their view, compositor files with their node. */
async function producedFiles(final: FinalConfig, out: OutputLayout): Promise<ProducedFile[]> {
  const suffixOf = new Map(
    (final.expectedOutputs?.views ?? []).map((v) => [v.name, v.fileSuffix.replace(/^[_.-]+/, '')]),
  );
  const viewOf = new Map<string, string | null>();
  for (const frame of expandFrameRanges(final.frameRanges ?? [])) {
    for (const f of filesOfFrame(final, frame)) if (f.kind === 'camera') viewOf.set(f.relativePath, f.view);
  }
  const nodes = final.compositeOutputNodes ?? [];
  const folders = compositeFolders(nodes.map((n) => n.name));
  const nodeOf = new Map(folders.map((folder, i) => [folder, nodes[i]!.name]));
  const files: ProducedFile[] = [];
  for (const rel of await listFiles(out.frames)) {
    const view = viewOf.get(rel);
    files.push({ path: `frames/${rel}`, outputType: 'frame', view: view ? (suffixOf.get(view) ?? view) : null });
  }
  for (const rel of await listFiles(out.composite)) {
    const folder = rel.split('/')[0]!;
    files.push({
      path: `composite/${rel}`,
      outputType: 'composite',
      view: null,
      relativePath: rel,
      compositeNodeName: nodeOf.get(folder) ?? folder,
    });
  }
  return files;
}

/** `completed`: told once a job reached `completed` here (its warm Blenders end, webhooks go out). */
/** Every frame file is there and whole, or the job fails with FRAMES_MISSING. */
async function checkProduced(
  env: WorkerEnv,
  final: FinalConfig,
  out: OutputLayout,
  files: readonly ProducedFile[],
): Promise<void> {
  // Files from before this worker started (a restart) are published only if a power loss left them whole.
  const damaged = await damagedFiles(
    files.map((f) => path.join(out.outDir, f.path)),
    env.startedAt,
  );
  if (damaged.length) {
    await Promise.all(damaged.map((f) => rm(f, { force: true })));
    const names = damaged.map((f) => path.relative(out.outDir, f));
    throw FatalTaskError.render(
      'FRAMES_MISSING',
      `${names.length} rendered file(s) were left damaged by a machine crash ` +
        `(${names.slice(0, 5).join(', ')}${names.length > 5 ? ', ...' : ''}): requeue the job to render their ` +
        `frames again.`,
      { damaged: names },
    );
  }
  const cameraCount = files.filter((f) => f.outputType === 'frame').length;
  const expected = final.expectedOutputs?.totals.cameraFiles;
  if (expected !== undefined && cameraCount < expected) {
    throw FatalTaskError.render('FRAMES_MISSING', `Only ${cameraCount} of ${expected} frame files were rendered.`, {
      cameraCount,
      expected,
    });
  }
}

export function finalizeHandler(env: WorkerEnv, completed?: (rec: JobRecord) => Promise<void>): TaskHandler {
  return async (task, ctx) => {
    let rec = await env.jobs.getById(task.jobId);
    if (!rec) return;
    if (rec.job.status === 'completed') {
      // Completed by an attempt that died before reporting it: report it now (idempotent).
      await completed?.(rec);
      return;
    }
    if (rec.job.status === 'booting') rec = await moveJob(env.jobs, rec.job.id, 'markRendering');
    if (rec?.job.status === 'rendering') rec = await moveJob(env.jobs, rec.job.id, 'startFinalizing');
    if (!rec || rec.job.status !== 'finalizing') return;
    const final = rec.job.finalConfig;
    if (!final) throw FatalTaskError.render('NOT_PLANNED', 'The render has no final config.');
    const jobDir = jobDirOf(env.settings.workRoot, rec.job.id);
    const out = outputLayout(jobDir);
    const staging = env.settings.stageFrames ? new FrameStaging(env.storage, stagingPrefix(rec.job.id)) : undefined;
    // Chunks may have run on other machines: bring every staged file here first.
    if (staging) ctx.log.info({ fetched: await staging.fetchMissing(out) }, 'staged frames fetched');
    const files = await producedFiles(final, out);
    await checkProduced(env, final, out, files);
    const result = await finalizeOutputs({
      jobId: rec.job.id,
      workspaceId: rec.job.workspaceId,
      outputDir: out.outDir,
      files,
      storage: env.storage,
      videoOutput: final.videoOutput ?? false,
      fps: final.fps ?? 24,
      fpsBase: final.fpsBase ?? 1,
      signal: ctx.signal,
      workDir: jobDir,
      // Frames a warm slot of this machine stored as they finished are not stored again.
      ...(staging ? {} : { reuse: await unchangedEarlyOutputs(jobDir) }),
      ffmpeg: {
        ...(env.settings.ffmpeg ? { ffmpegPath: env.settings.ffmpeg } : {}),
        ...(env.settings.ffprobe ? { ffprobePath: env.settings.ffprobe } : {}),
        ...(ctx.taskLog ? { onLine: (stream: 'stderr', line: string) => ctx.taskLog?.line(stream, line) } : {}),
      },
    });
    for (const w of result.warnings) ctx.log.warn({ warning: w }, 'finalize warning');
    const retention = env.settings.outputRetentionDays * 86_400_000;
    const planned = final.computeDeviceType ?? 'CPU';
    const runs = staging
      ? await staging.runs(planned)
      : await readRunsFile(path.join(jobDir, RENDER_SECONDS_FILE), planned);
    // Runs that found no usable GPU rendered on the CPU: finalConfig says so.
    const used = finalConfigFromRuns(final, runs) ?? final;
    const done = await moveJob(
      env.jobs,
      rec.job.id,
      'complete',
      {
        normalizedSeconds: normalizedSeconds(runs),
        output: { isDeletedForClient: false, scheduledForDeletionAt: new Date(Date.now() + retention).toISOString() },
        ...(result.warnings.length || used !== final
          ? { finalConfig: { ...used, notes: [used.notes, ...result.warnings].filter(Boolean).join('\n') } }
          : {}),
      },
      { outputs: result.outputs, previewKey: result.previewKey },
    );
    if (!done) {
      ctx.log.info('job left finalizing meanwhile (canceled?): deleting its outputs');
      await deleteUnpublished(env.storage, jobOutputPrefix(rec.job.workspaceId, rec.job.id));
      return;
    }
    // Every frame is done: the counters say so, whichever worker wrote them last.
    const frames = expandFrameRanges(final.frameRanges ?? []);
    await env.jobs.setProgress(
      new ProgressTracker({ jobId: rec.job.id, frames, doneFrames: frames }).snapshot('completed'),
    );
    await removeJobDir(env.settings.workRoot, rec.job.id);
    await staging?.remove();
    await completed?.(done);
  };
}
