import { ERRORS, type ErrorName } from '../../shared/errors.js';
import type { ErrorBody, ErrorDetail } from '../../shared/api/error-body.js';

/** An error the API answers with: its name picks status and message from the registry. */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly errorName: ErrorName;
  readonly details: ErrorDetail[];
  readonly metadata: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    name: ErrorName,
    opts: {
      message?: string;
      details?: ErrorDetail[];
      metadata?: Record<string, unknown>;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(opts.message ?? ERRORS[name].message);
    this.errorName = name;
    this.statusCode = ERRORS[name].status;
    this.details = opts.details ?? [];
    this.metadata = opts.metadata ?? {};
    this.headers = opts.headers ?? {};
  }

  body(requestId: string): ErrorBody {
    return {
      message: this.message,
      name: this.errorName,
      details: this.details,
      type: this.errorName === 'VALIDATION_ERROR' ? 'zod' : 'api',
      metadata: { ...this.metadata, requestId },
    };
  }
}
