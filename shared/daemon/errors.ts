// Errors the bridge daemon answers itself, in the same body as the service's (ErrorBody). Errors
// the service answered reach the caller unchanged (name, status and message of ERRORS), so a
// client handles both with one code path.
import type { ErrorSpec } from '../errors.js';

export const DAEMON_ERRORS = {
  DAEMON_UNAUTHORIZED: {
    status: 401,
    message:
      'Missing or wrong daemon token: send "Authorization: Bearer <token>" with the token from the daemon ' +
      'state file (renderbridge daemon --print-state shows where it is).',
  },
  DAEMON_FORBIDDEN_ORIGIN: {
    status: 403,
    message:
      'Requests from web pages of other origins and for other host names are refused: call the daemon from a ' +
      'local program, or open its job window at http://127.0.0.1:<port>/ui/.',
  },
  DAEMON_NOT_FOUND: {
    status: 404,
    message: 'No such daemon endpoint, job, pack or submission: list them with GET /jobs or GET /submissions.',
  },
  DAEMON_BAD_REQUEST: {
    status: 400,
    message: 'The request is invalid: fix the fields listed in details and send it again.',
  },
  NO_API_KEY: {
    status: 409,
    message:
      'No API key is configured: store one with the tray app (OS keychain) or set RENDERBRIDGE_API_KEY, then retry.',
  },
  PACK_FAILED: {
    status: 422,
    message: 'The project could not be packed: see details for the file that failed, fix it and retry.',
  },
  PACK_CHANGED: {
    status: 409,
    message:
      'A file of the pack changed, moved or vanished after the project was packed, so the farm would not ' +
      'render what was packed: pack again (press Render again), then submit.',
  },
  SERVICE_UNREACHABLE: {
    status: 502,
    message:
      'The render service did not answer: check the service URL (renderbridge daemon --service URL) and that ' +
      'it is running.',
  },
  JOB_NOT_COMPLETED: {
    status: 409,
    message: 'Only a completed job has outputs to download: wait for it to complete (renderbridge jobs show ID).',
  },
  OUTPUTS_DELETED: {
    status: 410,
    message: 'The outputs were deleted after their retention period: render the project again to get them.',
  },
  DOWNLOAD_INCOMPLETE: {
    status: 502,
    message:
      'Some outputs could not be saved (see details): run the download again; files already complete are skipped.',
  },
  SIZE_MISMATCH: {
    status: 502,
    message:
      'A downloaded file did not have the size the service announced, so it was not kept: run the download again ' +
      '(it resumes); if it keeps happening, a proxy or cache between this computer and the farm changes the files: ' +
      "tell the farm's operator.",
  },
  NETWORK_ERROR: {
    status: 502,
    message: 'The connection to the service failed during the transfer: check the network and run the download again.',
  },
  DOWNLOAD_FAILED: {
    status: 502,
    message: 'The download failed: run it again; complete files are skipped and partial ones resume.',
  },
  JOB_FAILED: {
    status: 422,
    message:
      'The job failed on the farm, which gave no reason (no failedReason): look at the job there ' +
      "(renderbridge jobs show ID), then submit again; if it fails again, ask the farm's operator why.",
  },
  JOB_CANCELED: {
    status: 409,
    message: 'The job was canceled before it completed: submit the project again to render it.',
  },
  SUBMISSION_FAILED: {
    status: 502,
    message:
      'The submission stopped for a reason no other error names (e.g. the upload URLs kept expiring: check ' +
      "this computer's clock): see the message, then submit again.",
  },
  SUBMISSION_ABORTED: {
    status: 409,
    message:
      'The submission was stopped before it finished (the daemon shut down or it was interrupted): submit again.',
  },
  ESTIMATE_NOT_OFFERED: {
    status: 409,
    message:
      'This render service does not offer estimates (its GET /extensions does not list estimate): render ' +
      'without one, or ask the farm operator for a service that estimates.',
  },
  ESTIMATE_FAILED: {
    status: 422,
    message:
      'The farm could not estimate this render (the message says why, e.g. no worker has a fitting Blender ' +
      'build): fix that and estimate again, or render without an estimate.',
  },
  ESTIMATE_CANCELED: {
    status: 409,
    message:
      'The estimate was canceled before it was ready; the job stays validated: estimate it again, or render ' +
      'it (POST /submissions with its jobId).',
  },
  DAEMON_INTERNAL_ERROR: {
    status: 500,
    message:
      'The daemon failed unexpectedly: retry, and if it keeps happening restart it (renderbridge daemon) and ' +
      'report its log.',
  },
  WEBHOOK_SIGNATURE_INVALID: {
    status: 401,
    message:
      'The webhook signature does not match: check that the service and the daemon share the same webhook secret.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type DaemonErrorName = keyof typeof DAEMON_ERRORS;
export const DAEMON_ERROR_NAMES = Object.keys(DAEMON_ERRORS) as DaemonErrorName[];
