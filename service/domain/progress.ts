import type { JobProgress } from '../../shared/api/progress.js';
import type { JobStatus } from '../../shared/job-status.js';

/** Progress before the render has produced counters: every counter null (spec). */
export function emptyProgress(jobId: string, status: JobStatus): JobProgress {
  return {
    jobId,
    status,
    framesTotal: null,
    framesDone: null,
    framesRendering: null,
    framesFailed: null,
    currentFrame: null,
    currentSample: null,
    samplesTotal: null,
    percent: null,
    etaSeconds: null,
    updatedAt: null,
  };
}
