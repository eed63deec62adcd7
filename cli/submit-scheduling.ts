// The scheduling options of `renderbridge submit` (extension scheduling): priority, preview frames
// first, the approval gate and the jobs to wait for. Unset, nothing is sent and the service's
// defaults apply (priority 50, previews first, no gate, waiting for nothing).
import type { Command } from 'commander';
import type { SchedulingRequest } from '../shared/api/scheduling.js';
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
      (v: string, prev: string[]) => [
        ...prev,
        ...v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ],
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
  };
  return Object.keys(s).length ? s : undefined;
}
