// Where a job's Blender work runs: validation and planning read which Blender saved the scene and
// route it (blender/version-routing.ts) among the farm's builds. When this worker has the chosen
// version the work runs here; otherwise the task is handed on, with a requirement that placement
// (placement.ts) matches, to a worker that has it. When no build of the farm opens the file, the
// job fails at once with a message that names the file's version, the farm's builds and what to install.
import type { BlenderBuild } from '../../../blender/builds.js';
import { noBuildMessage, routeVersion, type VersionLike } from '../../../blender/version-routing.js';
import type { TaskRequirements } from '../../domain/tasks.js';
import type { WorkerEnv } from './env.js';
import { minorVersion } from '../../../blender/builds.js';

export type BlenderRoute =
  | { where: 'here'; build: BlenderBuild; exact: boolean; note?: string }
  | { where: 'elsewhere'; requires: TaskRequirements }
  | { where: 'nowhere'; message: string };

/**
 * Routes a scene saved by `file` (asked for `requested`, default the file's own version). With the
 * farm's builds known (the registry) the farm's best build wins; without them (a remote worker),
 * this worker's best build, else any worker whose builds open the file.
 */
export async function routeBlender(
  env: Pick<WorkerEnv, 'builds' | 'farmBuilds'>,
  file: VersionLike,
  requested?: VersionLike,
): Promise<BlenderRoute> {
  const farm = env.farmBuilds ? await env.farmBuilds().catch(() => undefined) : undefined;
  if (farm) {
    const routed = routeVersion(farm, file, requested);
    if (!routed) return { where: 'nowhere', message: noBuildMessage(file, farm) };
    const here = env.builds
      .filter((b) => minorVersion(b) === routed.minor)
      .sort((a, b) => a.version.patch - b.version.patch)
      .pop();
    if (!here) return { where: 'elsewhere', requires: { blender: routed.minor } };
    return { where: 'here', build: here, exact: routed.exact, ...(routed.note ? { note: routed.note } : {}) };
  }
  const routed = routeVersion(
    env.builds.map((b) => b.version),
    file,
    requested,
  );
  const here = routed && env.builds.find((b) => b.version === routed.version);
  if (here) return { where: 'here', build: here, exact: routed.exact, ...(routed.note ? { note: routed.note } : {}) };
  return { where: 'elsewhere', requires: { opens: `${file.major}.${file.minor}` } };
}
