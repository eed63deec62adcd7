// The scheduling options of `renderbridge submit` (extension scheduling): priority, preview frames
// first, the approval gate, the jobs to wait for and the worker tags required. Unset, nothing is
// sent and the service's defaults apply (priority 50, previews first, no gate, waiting for nothing,
// any worker).
import type { Command } from 'commander';
import { MAX_REQUIRED_TAGS, WORKER_TAG_PATTERN, type SchedulingRequest } from '../shared/api/scheduling.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { parsePriority } from './jobs-scheduling.js';

export interface SchedulingOptions {
  /** 0-100. Default: the service's (50). */
  priority?: number;
  /** False with --no-preview-frames. Default true: the first, middle and last frames render first. */
  previewFrames: boolean;
  /** Hold the other frames until `renderbridge jobs approve ID`. Default false. */
  approvePreviews?: boolean;
  /** Job ids to wait for (--after, repeatable). Default none. */
  after: string[];
  /** Worker tags the job needs (--require-tag, repeatable). Default none: any worker. */
  requireTag: string[];
}

/** Comma-separated values of a repeatable option, added to the earlier ones. */
function list(v: string, prev: string[]): string[] {
  return [
    ...prev,
    ...v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  ];
}

/** --require-tag: checked here, so a bad tag is a usage error before anything is packed or uploaded. */
function requiredTag(v: string, prev: string[]): string[] {
  const tags = [...new Set(list(v, prev))];
  const bad = tags.find((t) => !WORKER_TAG_PATTERN.test(t));
  if (bad !== undefined) {
    throw new CliError(
      `"${bad}" is not a worker tag: use letters, digits and . _ : / - (e.g. gpu:a4000, site:paris), ` +
        'at most 64 characters',
      EXIT.USAGE,
    );
  }
  if (tags.length > MAX_REQUIRED_TAGS) throw new CliError(`at most ${MAX_REQUIRED_TAGS} required tags`, EXIT.USAGE);
  return tags;
}

export function withSchedulingOptions(cmd: Command): Command {
  return cmd
    .option('--priority <n>', 'job priority 0-100, higher claimed first (default: 50)', parsePriority)
    .option('--no-preview-frames', 'do not render the first, middle and last frames before the others')
    .option(
      '--approve-previews',
      'render the preview frames, then wait for "renderbridge jobs approve ID" before the others',
    )
    .option(
      '--after <job>',
      'start only once this job of the workspace has completed; fail if it fails (repeatable)',
      list,
      [],
    )
    .option(
      '--require-tag <tag>',
      'render only on workers that have this tag, e.g. gpu:a4000 or site:paris (repeatable)',
      requiredTag,
      [],
    );
}

/** The render request's `scheduling`, or undefined when no option asked for anything. */
export function schedulingFrom(o: Partial<SchedulingOptions>): SchedulingRequest | undefined {
  const s: SchedulingRequest = {
    ...(o.priority !== undefined ? { priority: o.priority } : {}),
    ...(o.previewFrames === false ? { previewFrames: false } : {}),
    ...(o.approvePreviews ? { approvePreviews: true } : {}),
    ...(o.after?.length ? { dependsOn: o.after } : {}),
    ...(o.requireTag?.length ? { requiredTags: o.requireTag } : {}),
  };
  return Object.keys(s).length ? s : undefined;
}
