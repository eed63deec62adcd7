// Pure pieces of a submission: the render body from the submit settings, the default output
// folder, and the error body every failure carries.
import path from 'node:path';
import type { ErrorBody } from '../../shared/api/error-body.js';
import type { FailedReason, Job } from '../../shared/api/job.js';
import type { RequestedRenderConfig } from '../../shared/api/render-config.js';
import {
  ApiError,
  JobStoppedError,
  LocalFileError,
  NetworkError,
  ResponseFormatError,
  UploadUrlsExpiredError,
} from '../../shared/client/errors.js';
import type { SubmitSettings } from '../../shared/daemon/submission-schemas.js';
import { DaemonError } from '../errors.js';
import { safeRelativePath } from '../download/output-paths.js';

/**
 * `requestedRenderConfig` of POST /jobs/{id}/render: `settings.renderConfig` as given, then the
 * named settings over it (frames -> frameRanges, camera -> activeCamera, viewLayer ->
 * activeViewLayer, format -> outputFormat, video -> videoOutput). `colorManagementPreset`, which
 * the service requires, defaults to `default`. Values are not checked here: the service answers a
 * 400 with the bad fields listed, and that body reaches the caller.
 */
export function renderConfigFrom(settings: SubmitSettings): RequestedRenderConfig {
  const config: Record<string, unknown> = { colorManagementPreset: 'default', ...settings.renderConfig };
  if (settings.frames !== undefined) config['frameRanges'] = settings.frames;
  if (settings.camera !== undefined) config['activeCamera'] = settings.camera;
  if (settings.viewLayer !== undefined) config['activeViewLayer'] = settings.viewLayer;
  if (settings.format !== undefined) config['outputFormat'] = settings.format;
  if (settings.video !== undefined) config['videoOutput'] = settings.video;
  return config as RequestedRenderConfig;
}

/** `<downloadsDir>/<name>-<first 8 characters of the job id>`, the name made safe for a folder. */
export function defaultOutDir(downloadsDir: string, name: string, jobId: string): string {
  const stem = path.basename(name).replace(/\.(blend|zip)$/i, '');
  const safe = safeRelativePath(stem.replace(/[\\/]/g, '_'));
  return path.join(downloadsDir, `${safe.ok ? safe.relative : 'job'}-${jobId.slice(0, 8)}`);
}

/** The error body of a job that stopped: its failedReason (name, message from errorDetails), else the status. */
export function jobStoppedBody(job: Job): ErrorBody {
  const reason: FailedReason | null = job.failedReason ?? null;
  if (job.status === 'canceled') {
    return {
      name: 'JOB_CANCELED',
      message: `Job ${job.id} was canceled: submit the project again to render it.`,
      details: [],
      type: 'api',
      metadata: { jobId: job.id },
    };
  }
  if (!reason) {
    return {
      name: 'JOB_FAILED',
      // The spec fills failedReason "when available": a farm may have no words for a failure.
      message:
        `Job ${job.id} failed on the farm, which gave no reason: look at the job there ` +
        `(renderbridge jobs show ${job.id}, or the farm's dashboard), then submit again; ` +
        "if it fails again, ask the farm's operator why.",
      details: [],
      type: 'api',
      metadata: { jobId: job.id },
    };
  }
  const detailMessage = reason.errorDetails['message'];
  const message = typeof detailMessage === 'string' ? detailMessage : `The job failed (${reason.type} ${reason.name}).`;
  const warnings = Array.isArray(reason.errorDetails['warnings']) ? (reason.errorDetails['warnings'] as unknown[]) : [];
  const details = warnings.flatMap((w) => {
    if (typeof w !== 'object' || w === null) return [];
    const code = (w as Record<string, unknown>)['code'];
    const text = (w as Record<string, unknown>)['message'];
    return typeof code === 'string' ? [{ code, path: [], message: typeof text === 'string' ? text : code }] : [];
  });
  return {
    name: reason.name,
    message,
    details,
    type: 'api',
    metadata: { jobId: job.id, status: job.status, failedReason: reason },
  };
}

/**
 * The body a failed submission carries: the service's error body (ApiError), the daemon's
 * (DaemonError), the job's failedReason (JobStoppedError), PACK_CHANGED for a local file that could
 * not be read, SERVICE_UNREACHABLE for a request that got no answer or one off the contract, else
 * SUBMISSION_FAILED: the upload URLs kept expiring (this machine's clock), or an error no step
 * knows; each message says what to do. A submission sets no time limit on its waits: one that
 * must end sooner is stopped (SUBMISSION_ABORTED), never timed out.
 */
export function failureBody(err: unknown): ErrorBody {
  if (err instanceof ApiError) return err.body;
  if (err instanceof DaemonError) return err.toBody();
  if (err instanceof JobStoppedError) return jobStoppedBody(err.job);
  // A file of this machine is never the service's fault: name it and say what to do.
  if (err instanceof LocalFileError) {
    return new DaemonError(
      'PACK_CHANGED',
      `"${err.file}" could not be read for the upload ` +
        `(${err.code === 'ENOENT' ? 'it was moved or deleted' : (err.code ?? 'unreadable')}): restore it or ` +
        `pack the project again, then submit.`,
      { file: err.file },
    ).toBody();
  }
  if (err instanceof ResponseFormatError) {
    return new DaemonError(
      'SERVICE_UNREACHABLE',
      `${err.message}: check that the service URL points at a renderbridge-compatible service.`,
    ).toBody();
  }
  if (err instanceof NetworkError) {
    // The service answered this submission before: its URL is right, the connection is not.
    if (err.dropped)
      return new DaemonError(
        'SERVICE_UNREACHABLE',
        `${err.message}: check this computer's network connection, then submit again.`,
      ).toBody();
    return new DaemonError(
      'SERVICE_UNREACHABLE',
      `${err.message}: check the service URL and that the service is running.`,
    ).toBody();
  }
  if (err instanceof UploadUrlsExpiredError) {
    return {
      name: 'SUBMISSION_FAILED',
      message:
        `The upload stopped: ${err.message}. Check that this computer's clock is right (it may be ahead of the ` +
        `service's), then submit again.`,
      details: [],
      type: 'api',
      metadata: { queries: err.queries },
    };
  }
  // Nothing above knew the error: say what it was, and what to do.
  const message = err instanceof Error ? err.message : String(err);
  return {
    name: 'SUBMISSION_FAILED',
    message: `${message}: submit again, and if it fails again, see the daemon log.`,
    details: [],
    type: 'api',
    metadata: {},
  };
}

/** Calls `fn` at most once per `intervalMs`, except for calls marked final. */
export function throttle<A extends unknown[]>(
  intervalMs: number,
  fn: (...args: A) => void,
): (final: boolean, ...args: A) => void {
  let last = 0;
  return (final, ...args) => {
    const now = Date.now();
    if (!final && now - last < intervalMs) return;
    last = now;
    fn(...args);
  };
}
