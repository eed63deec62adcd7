// The native notification for a renderComplete event, as data: main/notifications.ts shows it and
// opens `openPath` on click. A completed job points at its outputs folder, or, rendered with downloading
// off, says how to get its outputs; a failed one says why. A canceled job gets none: someone chose to
// stop it, and the one who submitted it sees JOB_CANCELED where they did (the add-on's panel, the
// CLI's exit code 5). A submission that failed before it made a
// job (packing, uploading: a file changed after packing, no answer from the service) has no
// renderComplete, so it gets its own, with the daemon's message, which says what to do. A download that
// fails after "Render complete" gets one too: that folder is not the whole render.
import path from 'node:path';
import type { DaemonEvent } from '../../shared/daemon/api.js';
import type { DownloadState, RenderComplete } from '../../shared/daemon/job-schemas.js';
import type { Submission } from '../../shared/daemon/submission-schemas.js';
import { failureText, jobName } from './tray-model.js';

export interface NotificationModel {
  title: string;
  body: string;
  /** Folder opened when the notification is clicked; null: clicking opens the job window. */
  openPath: string | null;
  urgency: 'normal' | 'critical';
}

export function notificationFor(e: RenderComplete): NotificationModel | null {
  const name = jobName(e.job);
  if (e.status === 'completed') {
    return {
      title: 'Render complete',
      body: e.outDir
        ? `${name} is done. Click to open ${e.outDir}.`
        : `${name} is done. Its outputs stay on the farm (not downloaded): get them with Download in the ` +
          `Blender add-on's Recent jobs, or renderbridge jobs download ${e.jobId}.`,
      openPath: e.outDir,
      urgency: 'normal',
    };
  }
  if (e.status === 'failed')
    return {
      title: 'Render failed',
      // A farm may fail a job without a reason (the spec fills failedReason "when available").
      body: e.job.failedReason
        ? `${name} failed — ${failureText(e.job)}`
        : `${name} failed on the farm, which gave no reason: look at the job there ` +
          `(renderbridge jobs show ${e.jobId}), then render it again; if it fails again, ask the farm's operator why.`,
      openPath: null,
      urgency: 'critical',
    };
  return null;
}

/** A notification for a submission event: only a failure before any job existed (others end in renderComplete). */
export function submissionNotification(s: Submission): NotificationModel | null {
  if (s.step !== 'failed' || s.jobId !== null || s.error?.name === 'SUBMISSION_ABORTED') return null;
  const name = s.path ? path.basename(s.path) : 'The project';
  return {
    title: 'Not sent to the farm',
    body: `${name}: ${s.error?.message ?? 'the submission failed; see the daemon log.'}`,
    openPath: null,
    urgency: 'critical',
  };
}

/**
 * Notifications for download events: one per failed download (a failure can be published twice, as the
 * last progress and as the outcome), and again only after the job's download was started anew.
 */
export function downloadNotifier(): (d: DownloadState) => NotificationModel | null {
  const told = new Set<string>();
  return (d) => {
    if (d.state !== 'failed') {
      told.delete(d.jobId);
      return null;
    }
    if (told.has(d.jobId)) return null;
    told.add(d.jobId);
    return downloadNotification(d);
  };
}

/** A notification for a download event: only a failed one (the folder holds part of the render, or none). */
export function downloadNotification(d: DownloadState): NotificationModel | null {
  if (d.state !== 'failed') return null;
  const done = d.files > 0 ? ` ${d.filesDone} of ${d.files} files are in ${d.outDir}.` : '';
  return {
    title: 'Download failed',
    body:
      `Job ${d.jobId.slice(0, 8)}: ${d.error?.message ?? 'the download stopped; see the daemon log.'}${done} ` +
      'The frames stay on the farm: click to open the job window and download again.',
    openPath: null,
    urgency: 'critical',
  };
}

/**
 * The tray's notifications, one daemon event at a time (electron/main/index.ts shows what it returns):
 * renderComplete, a submission that failed before it made a job, a failed download.
 */
export function trayNotifier(): (e: DaemonEvent) => NotificationModel | null {
  const download = downloadNotifier();
  return (e) =>
    e.event === 'renderComplete'
      ? notificationFor(e.data)
      : e.event === 'submission'
        ? submissionNotification(e.data)
        : e.event === 'download'
          ? download(e.data)
          : null;
}
