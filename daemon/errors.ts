// An error the daemon answers itself, by registry name (shared/daemon/errors.ts).
import type { ErrorBody, ErrorDetail } from '../shared/api/error-body.js';
import { DAEMON_ERRORS, type DaemonErrorName } from '../shared/daemon/errors.js';

export class DaemonError extends Error {
  readonly status: number;
  constructor(
    readonly code: DaemonErrorName,
    /** Replaces the registry's message when the caller knows more (keep the "what to do" part). */
    message?: string,
    readonly metadata: Record<string, unknown> = {},
    readonly details: ErrorDetail[] = [],
  ) {
    super(message ?? DAEMON_ERRORS[code].message);
    this.name = 'DaemonError';
    this.status = DAEMON_ERRORS[code].status;
  }

  toBody(): ErrorBody {
    return { name: this.code, message: this.message, details: this.details, type: 'api', metadata: this.metadata };
  }
}
