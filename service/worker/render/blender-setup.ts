// What both render modes hand Blender, built in one place: the job's render settings written to
// `settings.json` in the attempt folder (render_setup.py reads them), and the invocation's
// scene, build, slot pinning and sandbox. A chunk adds its frames (renderInvocation), a warm
// Blender takes them on stdin (warmInvocation): that is all that differs.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import type { RequestedConfig } from '../../../shared/api/render-config.js';
import { buildFor } from '../../../blender/builds.js';
import type { RenderInvocationOptions } from '../../../blender/render/render-invocation.js';
import { renderSettingsFrom } from '../../../blender/render/render-settings.js';
import type { JobInternal } from '../../ports/jobs.js';
import type { OutputLayout } from '../outputs/chunk-files.js';
import { renderAddons } from '../project/addon-policy.js';
import { projectFilePath, type PreparedProject } from '../project/job-files.js';
import type { Slot } from '../runtime/devices.js';
import type { WorkerEnv } from '../runtime/env.js';

export type RenderPlan = NonNullable<JobInternal['render']>;

/** What a render of the job needs to know to start Blender in one slot. */
export interface BlenderSetupInput {
  env: Pick<WorkerEnv, 'settings'>;
  project: PreparedProject;
  final: FinalConfig;
  requested: RequestedConfig;
  plan: RenderPlan;
  /** This machine's build of the planned version (planBinary). */
  binary: string;
  slot: Slot | undefined;
  attempt: OutputLayout;
}

/** This machine's build of the planned version (placement only hands the task to workers that have one). */
export function planBinary(env: Pick<WorkerEnv, 'builds'>, plan: RenderPlan): string {
  return buildFor(env.builds, plan.blenderVersion)?.binary ?? plan.blender;
}

/** Writes the attempt's settings.json and answers the invocation options of either mode, frames aside. */
export async function blenderSetup(s: BlenderSetupInput): Promise<Omit<RenderInvocationOptions, 'chunk'>> {
  const { final, project, slot } = s;
  const device = final.computeDeviceType ?? 'CPU';
  const gpuUuids = device !== 'CPU' && slot?.gpuUuids.length ? slot.gpuUuids : undefined;
  const addons = renderAddons(s.env.settings.bundledAddons, project.manifest, final, project.root);
  const settings = renderSettingsFrom(final, {
    compositeDir: s.attempt.composite,
    addonPaths: addons.paths,
    ...(addons.ids ? { addonIds: addons.ids } : {}),
    requested: s.requested,
    allowCpuFallback: true,
    pathRemaps: { root: project.root, remaps: project.manifest?.remaps ?? [] },
    ...(gpuUuids ? { gpuUuids } : {}),
  });
  const settingsFile = path.join(s.attempt.outDir, 'settings.json');
  await writeFile(settingsFile, JSON.stringify(settings));
  return {
    binary: s.binary,
    sceneFile: projectFilePath(project, final.pathToFileForRender ?? 'scene.blend'),
    settingsFile,
    attemptDir: s.attempt.frames,
    jobDir: project.jobDir,
    sandbox: s.env.settings.sandbox,
    ...(s.env.settings.renderNice ? { nice: s.env.settings.renderNice } : {}),
    ...(s.plan.blenderVersion ? { blenderMajor: Number(s.plan.blenderVersion.split('.')[0]) } : {}),
    deviceType: device,
    ...(final.sceneToRender ? { sceneName: final.sceneToRender } : {}),
    ...(gpuUuids ? { gpuUuids } : {}),
    ...(slot?.threads ? { threads: slot.threads } : {}),
    ...(slot?.memoryCgroupProcs ? { cgroupProcs: slot.memoryCgroupProcs } : {}),
  };
}
