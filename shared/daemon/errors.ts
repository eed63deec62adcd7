// Errors the bridge daemon answers itself, in the same body as the service's (ErrorBody). Errors
// the service answered reach the caller unchanged (name, status and message of ERRORS), so a
// client handles both with one code path.
import type { ErrorSpec } from '../errors.js';

export const DAEMON_ERRORS = {
  DAEMON_UNAUTHORIZED: { status: 401, message: 'Missing or wrong daemon token: send "Authorization: Bearer <token>" with the token from the daemon state file (renderbridge daemon --print-state shows where it is).' },
  DAEMON_FORBIDDEN_ORIGIN: { status: 403, message: 'Browser and non-local requests are refused: call the daemon from a local program at http://127.0.0.1:<port>, without an Origin header.' },
  DAEMON_NOT_FOUND: { status: 404, message: 'No such daemon endpoint, job, pack or submission: list them with GET /jobs or GET /submissions.' },
  DAEMON_BAD_REQUEST: { status: 400, message: 'The request is invalid: fix the fields listed in details and send it again.' },
  NO_API_KEY: { status: 409, message: 'No API key is configured: store one with the tray app (OS keychain) or set RENDERBRIDGE_API_KEY, then retry.' },
  PACK_FAILED: { status: 422, message: 'The project could not be packed: see details for the file that failed, fix it and retry.' },
  SERVICE_UNREACHABLE: { status: 502, message: 'The render service did not answer: check the service URL (renderbridge daemon --service URL) and that it is running.' },
  WEBHOOK_SIGNATURE_INVALID: { status: 401, message: 'The webhook signature does not match: check that the service and the daemon share the same webhook secret.' },
} as const satisfies Record<string, ErrorSpec>;

export type DaemonErrorName = keyof typeof DAEMON_ERRORS;
export const DAEMON_ERROR_NAMES = Object.keys(DAEMON_ERRORS) as DaemonErrorName[];
