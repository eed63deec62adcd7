// Whether any live worker has the Blender build a job's task needs (the task's `requires`: a version
// routed by planning, or "a build that opens files of 4.2" from a worker that could not see the
// farm). Pure rules for the placement notice: a task no live worker can ever run says so on its job
// (Job.placement), as a required tag no live worker has does (worker-tags.ts).
import { parseRequestedVersion } from '../../blender/builds.js';
import { canOpen } from '../../blender/version-routing.js';
import type { BlenderVersion } from '../../blender/version.js';

export interface BuildNeeds {
  /** `4.2`: a build of that minor version. */
  blender?: string;
  /** `4.2`: a build that opens files saved by that version. */
  opens?: string;
}

/** Why no live slot with the job's tags has a build for `needs`; null when one has. */
export function noBuildReason(
  slots: readonly { tags: readonly string[]; builds?: readonly BlenderVersion[] }[],
  required: readonly string[],
  needs: BuildNeeds,
): string | null {
  const eligible = slots.filter((s) => required.every((t) => s.tags.includes(t)));
  const builds = eligible.flatMap((s) => s.builds ?? []);
  if (needs.blender && !builds.some((b) => `${b.major}.${b.minor}` === needs.blender)) {
    return `no live worker${required.length ? ' with its tags' : ''} has Blender ${needs.blender}`;
  }
  const file = needs.opens ? parseRequestedVersion(needs.opens) : undefined;
  if (file && !builds.some((b) => canOpen(b, file))) {
    return `no live worker${required.length ? ' with its tags' : ''} has a Blender that opens files of ${needs.opens}`;
  }
  return null;
}

/** Whether a notice is this module's (so a worker that finds a build clears only its own kind). */
export function isBuildNotice(reason: string | undefined): boolean {
  return reason !== undefined && / has (Blender |a Blender that opens)/.test(reason);
}
