// Turns any failure into the message a person reads and the exit code a script branches on.
import { ApiError, NetworkError } from '../shared/client/errors.js';
import { DaemonError } from '../daemon/errors.js';
import { EXIT, type ExitCode } from './exit-codes.js';

/** A failure the command already explained; `exitCode` says which kind. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.FAILURE,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The exit code and one-paragraph message for an error thrown by a command. */
export function describeFailure(err: unknown): { exitCode: ExitCode; message: string } {
  if (err instanceof CliError) return { exitCode: err.exitCode, message: err.message };
  if (err instanceof DaemonError) {
    const code = err.code === 'NO_API_KEY' ? EXIT.AUTH : err.code === 'SERVICE_UNREACHABLE' ? EXIT.SERVICE_UNREACHABLE : EXIT.FAILURE;
    return { exitCode: code, message: `${err.code}: ${err.message}` };
  }
  if (err instanceof ApiError) {
    const code = err.status === 401 ? EXIT.AUTH : EXIT.FAILURE;
    return { exitCode: code, message: `${err.body.name} (${err.status}): ${err.body.message}` };
  }
  if (err instanceof NetworkError) {
    return { exitCode: EXIT.SERVICE_UNREACHABLE, message: `${err.message}\nIs the service running? Check --service (or RENDERBRIDGE_SERVICE_URL).` };
  }
  return { exitCode: EXIT.FAILURE, message: err instanceof Error ? err.message : String(err) };
}
