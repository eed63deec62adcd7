// One submission from start to end, without a daemon (the CLI calls this directly):
// packing -> uploading -> creating -> validating -> rendering -> done (or failed at any step).
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Job } from '../../shared/api/job.js';
import type { RenderJobClient } from '../../shared/client/client.js';
import { TransferRate } from '../../shared/client/transfer-rate.js';
import type { DownloadState } from '../../shared/daemon/job-schemas.js';
import type { PackResult, Submission, SubmitRequest, Transfer } from '../../shared/daemon/submission-schemas.js';
import { downloadJobOutputs } from '../download/job.js';
import { DaemonError } from '../errors.js';
import type { ClientProvider, Downloads, Packer, Tracker } from '../ports.js';
import { estimateStep, reusedJob } from './estimate.js';
import { defaultOutDir, failureBody, renderConfigFrom, throttle } from './steps.js';
import { uploadPack, type UploadState } from './upload.js';

export interface SubmissionDeps {
  clients: ClientProvider;
  packer: Packer;
  /** Told the job's output folder (null when not downloading) and kicked once the render started. Default none. */
  tracker?: Tracker;
  /** Runs the download when the job completes; default none: downloadJobOutputs runs in this call. */
  downloads?: Downloads;
  /** Parent of the default output folders; a function is read at each submission (the daemon's follows config.toml). */
  downloadsDir: string | (() => string);
  /** Pause between two polls of GET /jobs/{id} while waiting for `validated` and `completed`. Default 1000 ms. */
  pollMs?: number;
  /** Least time between two pack or upload progress updates. Default 250 ms. */
  progressIntervalMs?: number;
  /** Blob parts sent at once when the service offers the content-addressed upload. Default 4. */
  uploadConcurrency?: number;
}

export interface RunSubmissionOptions {
  /** Id of the submission. Default a random UUID. */
  id?: string;
  /** End once the render has started (`--no-wait`): the result's step is then `rendering`. Default false. */
  noWait?: boolean;
  /** Aborts the step in progress; the submission ends `failed` with SUBMISSION_ABORTED. */
  signal?: AbortSignal;
  /** Told about each download progress update of the outputs (only when no `downloads` is given). */
  onDownload?: (state: DownloadState) => void;
}

/** First pause while waiting for `validated`; it grows to pollMs (waitForStatus firstIntervalMs). */
const FIRST_POLL_MS = 100;

/** A submission before its first step ran. */
export function newSubmission(req: SubmitRequest, id: string = randomUUID()): Submission {
  const now = new Date().toISOString();
  return {
    id,
    path: req.pack?.path ?? req.packId ?? req.jobId ?? '',
    step: 'packing',
    jobId: null,
    uploadedBytes: 0,
    totalBytes: 0,
    pack: null,
    upload: null,
    preflight: null,
    warnings: [],
    error: null,
    estimate: null,
    outDir: null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * Runs the submission and resolves with its final state (done, failed, or rendering with
 * `noWait`); never rejects. `onUpdate` gets a copy of the state at every step and upload progress
 * update. Waiting for `validated` and `completed` polls GET /jobs/{id} with the shared client's
 * waitForStatus (a job that fails or is canceled ends the submission `failed` with its
 * failedReason). With `download` (the default) the submission is `done` once the outputs are in
 * outDir. The packer's zip is discarded once uploaded, or when the submission fails if this call
 * packed it (a pack given by packId is kept then, to submit again, unless a file of it changed
 * after packing: PACK_CHANGED drops it, and the next submission must pack again).
 */
export async function runSubmission(
  req: SubmitRequest,
  deps: SubmissionDeps,
  onUpdate: (submission: Submission) => void = () => undefined,
  options: RunSubmissionOptions = {},
): Promise<Submission> {
  const s = newSubmission(req, options.id);
  const signal = options.signal;
  const pollMs = deps.pollMs ?? 1000;
  const update = (patch: Partial<Submission>): void => {
    Object.assign(s, patch, { updatedAt: new Date().toISOString() });
    onUpdate({ ...s, warnings: [...s.warnings] });
  };
  const interval = deps.progressIntervalMs ?? 250;
  const packProgress = throttle(interval, (progress: Transfer) => update({ pack: progress }));
  const uploadProgress = throttle(interval, (upload: UploadState) =>
    update({ upload, uploadedBytes: upload.bytesDone, totalBytes: upload.bytesTotal }),
  );
  let pack: PackResult | undefined;
  let discardOnFailure = false;

  try {
    let client: RenderJobClient;
    let job: Job;
    if (req.jobId !== undefined) {
      // A job uploaded before (an estimate's): rendered or estimated as it is, nothing packed or sent.
      client = await deps.clients.client();
      update({ step: 'validating', jobId: req.jobId });
      job = await reusedJob(client, req.jobId, { signal, pollMs });
    } else {
      update({ step: 'packing' });
      if (req.packId !== undefined) {
        pack = deps.packer.get(req.packId);
        if (!pack)
          throw new DaemonError(
            'DAEMON_NOT_FOUND',
            `No pack ${req.packId}: it was submitted, or dropped when one of its files changed, or expired; ` +
              `pack the project again (POST /pack).`,
          );
      } else if (req.pack) {
        const packRate = new TransferRate();
        pack = await deps.packer.pack(req.pack, {
          signal,
          onProgress: (done, total) =>
            packProgress(total > 0 && done === total, {
              bytesDone: done,
              bytesTotal: total,
              ...packRate.update(done, total),
            }),
        });
        discardOnFailure = true;
      } else {
        throw new DaemonError('DAEMON_BAD_REQUEST', 'Give exactly one of packId and pack.');
      }
      update({
        path: pack.sourcePath,
        preflight: pack.preflight,
        warnings: [...pack.warnings],
        totalBytes: pack.bytes,
      });

      client = await deps.clients.client();
      update({ step: 'uploading', uploadedBytes: 0 });
      const uploaded = await uploadPack(client, deps.packer, pack, {
        signal,
        concurrency: deps.uploadConcurrency,
        onUpload: (u) => uploadProgress(u.bytesDone === u.bytesTotal, u),
        onZip: (progress) =>
          packProgress(progress.bytesTotal > 0 && progress.bytesDone === progress.bytesTotal, progress),
      });
      discardOnFailure = false;
      await deps.packer.discard(pack.packId).catch(() => undefined);

      update({ step: 'creating' });
      job = await client.createJob({ slug: uploaded.slug, uploadPreflight: pack.preflight }, { signal });
      update({ jobId: job.id });

      update({ step: 'validating' });
      const validationConfig = { ...req.settings.validationConfig };
      if (!validationConfig.pathToFileForRender && pack.sceneFile)
        validationConfig.pathToFileForRender = pack.sceneFile;
      await client.validateJob(job.id, { validationConfig }, { signal });
      // Validation often ends within a second or two (a scene the farm analysed before): polled
      // soon after it starts, then less often, so the render is asked for without a poll's delay.
      await client.waitForStatus(job.id, ['validated'], {
        intervalMs: pollMs,
        firstIntervalMs: Math.min(pollMs, FIRST_POLL_MS),
        signal,
      });
    }
    if (req.mode === 'check') {
      update({ step: 'done' });
      return { ...s, warnings: [...s.warnings] };
    }
    if (req.mode === 'estimate') {
      await estimateStep(client, job.id, renderConfigFrom(req.settings), update, { signal, pollMs });
      update({ step: 'done' });
      return { ...s, warnings: [...s.warnings] };
    }

    const downloadsDir = typeof deps.downloadsDir === 'function' ? deps.downloadsDir() : deps.downloadsDir;
    const outDir = path.resolve(
      req.outDir ??
        defaultOutDir(downloadsDir, req.pack?.path ?? pack?.sceneFile ?? job.sceneFile?.name ?? 'job', job.id),
    );
    const scheduling = await schedulingFor(client, req.settings.scheduling, (w) =>
      update({ warnings: [...s.warnings, w] }),
    );
    await client.renderJob(
      job.id,
      { requestedRenderConfig: renderConfigFrom(req.settings), ...(scheduling ? { scheduling } : {}) },
      { signal },
    );
    update({ step: 'rendering', outDir: req.download ? outDir : null });
    deps.tracker?.setOutDir(job.id, req.download ? outDir : null);
    deps.tracker?.kick();
    if (options.noWait) return { ...s };

    await client.waitForStatus(job.id, ['completed'], { intervalMs: pollMs, signal });
    if (req.download) {
      const result = await download(client, job.id, outDir, deps.downloads, options);
      if (result.state !== 'done') throw new DownloadFailed(result);
    }
    update({ step: 'done' });
  } catch (err) {
    const error =
      signal?.aborted && !(err instanceof DownloadFailed)
        ? {
            name: 'SUBMISSION_ABORTED',
            message:
              'The submission was stopped before it ended (interrupted, or the daemon shut down): submit ' +
              'again; a job already created keeps its state in the service.',
            details: [],
            type: 'api' as const,
            metadata: {},
          }
        : err instanceof DownloadFailed
          ? (err.state.error ?? failureBody(err))
          : failureBody(err);
    // A pack whose files changed can never be sent as packed: it is dropped too, so submitting it
    // again (by packId) says to pack again instead of failing the same way.
    if (pack && (discardOnFailure || error.name === 'PACK_CHANGED'))
      await deps.packer.discard(pack.packId).catch(() => undefined);
    update({ step: 'failed', error });
  }
  return { ...s, warnings: [...s.warnings] };
}

class DownloadFailed extends Error {
  constructor(readonly state: DownloadState) {
    super(`the outputs of job ${state.jobId} could not all be downloaded`);
  }
}

/** Through the daemon's Downloads (joining a run the tracker may have started), else in this call. */
async function download(
  client: RenderJobClient,
  jobId: string,
  outDir: string,
  downloads: Downloads | undefined,
  options: RunSubmissionOptions,
): Promise<DownloadState> {
  if (!downloads) {
    const report = await downloadJobOutputs(client, jobId, outDir, {
      signal: options.signal,
      onProgress: options.onDownload,
    });
    return report.state;
  }
  const running = downloads.get(jobId);
  if (!(running && running.outDir === outDir && running.state !== 'failed')) downloads.start(jobId, outDir);
  return downloads.settled(jobId);
}

/**
 * The render's `scheduling` where the service offers the extension; a service without it (a
 * spec-only one) would refuse the field, so it is dropped there with a warning and the job renders
 * in the service's own order.
 */
async function schedulingFor(
  client: RenderJobClient,
  asked: SubmitRequest['settings']['scheduling'],
  warn: (w: { code: string; message: string }) => void,
): Promise<SubmitRequest['settings']['scheduling']> {
  if (!asked || (await client.hasExtension('scheduling'))) return asked;
  warn({
    code: 'SCHEDULING_NOT_OFFERED',
    message:
      'This farm does not offer scheduling (priority, preview frames first, approval, waiting for jobs): ' +
      'the job renders in its own order.',
  });
  return undefined;
}
