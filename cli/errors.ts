// Turns any failure into the message a person reads and the exit code a script branches on.
import { ApiError, NetworkError } from '../shared/client/errors.js';
import { DaemonError } from '../daemon/errors.js';
import { EXIT, type ExitCode } from './exit-codes.js';

/** A failure the command already explained; `exitCode` says which kind. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.FAILURE,
    /** `error.name` of the --json document; default USAGE or CLI_ERROR by the exit code. */
    readonly errorName?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** What --json prints as `error`: the service's error body where there is one, else the same shape. */
export interface FailureBody {
  name: string;
  message: string;
  [key: string]: unknown;
}

export interface Failure {
  exitCode: ExitCode;
  /** One paragraph for stderr. */
  message: string;
  body: FailureBody;
}

/** The exit code, one-paragraph message and error body for an error thrown by a command. */
export function describeFailure(err: unknown): Failure {
  if (err instanceof CliError)
    return {
      exitCode: err.exitCode,
      message: err.message,
      body: { name: err.errorName ?? (err.exitCode === EXIT.USAGE ? 'USAGE' : 'CLI_ERROR'), message: err.message },
    };
  if (err instanceof DaemonError) {
    const code =
      err.code === 'NO_API_KEY'
        ? EXIT.AUTH
        : err.code === 'SERVICE_UNREACHABLE'
          ? EXIT.SERVICE_UNREACHABLE
          : EXIT.FAILURE;
    return { exitCode: code, message: `${err.code}: ${err.message}`, body: { name: err.code, message: err.message } };
  }
  if (err instanceof ApiError) {
    const code = err.status === 401 ? EXIT.AUTH : EXIT.FAILURE;
    return {
      exitCode: code,
      message: `${err.body.name} (${err.status}): ${err.body.message}`,
      body: { ...err.body, status: err.status },
    };
  }
  if (err instanceof NetworkError) {
    const message = `${err.message}\nIs the service running? Check --service (or RENDERBRIDGE_SERVICE_URL).`;
    return { exitCode: EXIT.SERVICE_UNREACHABLE, message, body: { name: 'SERVICE_UNREACHABLE', message: err.message } };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { exitCode: EXIT.FAILURE, message, body: { name: 'ERROR', message } };
}
