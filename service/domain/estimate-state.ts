// What a job stores of its estimate (extension estimate), in its service-only state: set by POST
// /jobs/{id}/estimate, filled by the worker that renders the sample frames, read by GET. The job's
// status never changes for it: an estimating job stays `validated` (docs/reference/api-extensions.md).
import type { RequestedConfig } from '../../shared/api/render-config.js';

export type EstimateStateName = 'sampling' | 'ready' | 'failed' | 'canceled';

export interface EstimateInternal {
  requestedConfig: RequestedConfig;
  state: EstimateStateName;
  startedAt: string;
  finishedAt?: string;
  /** One sentence, when it failed. */
  reason?: string;
  /** Frames rendered and kept under estimatePrefix, in the order they were rendered. */
  frames?: number[];
  /** The job's frames under this request, as ranges (a worker resolved them). */
  frameRanges?: string[];
  /**
   * Each sampled frame as its frame-statistics row measured it (kept here: the render's
   * rows come later, by the thousand).
   */
  samples?: { frame: number; seconds: number; peakMemoryBytes: number | null; device: string }[];
  /** Seconds each Blender run took to load the scene before its frame. */
  loadSeconds?: number[];
  /** What the run's cold first frames took beyond warm ones (estimate-samples.ts's lead). */
  warmupSeconds?: number[];
  /** What a render call's first frame took beyond a warm one: the setup each of the render's calls pays. */
  callSeconds?: number[];
  /**
   * Seconds from the estimate's task taken to its Blender's start (the project fetched and unpacked):
   * what each slot of the render pays before its scene loads.
   */
  prepareSeconds?: number[];
  /**
   * Frames of the job at which an animated integer property steps (frame-steps.ts, from the
   * analysis): the profile holds each segment between them flat. Default none.
   */
  steps?: number[];
  /** Bytes of each sampled frame's files, in `frames` order. */
  outputBytes?: number[];
  /** The estimate's own Blender runs: seconds, and normalizedSeconds as billing counts them. */
  ownSeconds?: number;
  ownNormalizedSeconds?: number;
  /** A render took over its Blender: the load and warm-up are off the own cost (estimate-takeover.ts). */
  takenOver?: boolean;
  /** The Blender version (`major.minor`) the samples rendered with. */
  blenderVersion?: string;
}

/** Task id of a job's estimate: one per job, so a repeated enqueue adds nothing. */
export const estimateTaskId = (jobId: string) => `estimate:${jobId}`;

/**
 * What the live ETA takes from a job's estimate: the frames it kept (never the render's own) and,
 * when it sampled the request the job renders, its samples as the timeline's profile and the setup
 * each render call pays.
 */
export function estimateProfile(
  est: EstimateInternal | undefined,
  requested: RequestedConfig | undefined,
):
  | { kept: number[]; profile?: { frame: number; seconds: number }[]; callSeconds?: number; steps?: number[] }
  | undefined {
  if (!est) return undefined;
  const kept = est.frames ?? [];
  const same = est.state !== 'failed' && requested !== undefined && sameRequest(est.requestedConfig, requested);
  if (!same || !est.samples?.length) return { kept: same ? kept : [] };
  const profile = est.samples.map((s) => ({ frame: s.frame, seconds: s.seconds }));
  const steps = est.steps?.length ? { steps: est.steps } : {};
  return est.callSeconds?.length
    ? { kept, profile, callSeconds: est.callSeconds[0]!, ...steps }
    : { kept, profile, ...steps };
}

/** Whether a render request is the one the estimate sampled (only then are its frames reused). */
export function sameRequest(a: RequestedConfig, b: RequestedConfig): boolean {
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}
