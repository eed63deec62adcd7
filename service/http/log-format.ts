// Where the service's log lines go: JSON lines for a log collector, or one human line per event on
// a terminal (pino-pretty). Either way pino redacts before it writes, so both formats hide the same.
import type { DestinationStream } from 'pino';
import pretty from 'pino-pretty';
import type { ServiceConfig } from '../config.js';

/**
 * `auto` is pretty exactly when stdout is a terminal (a person watching), JSON otherwise (journald, a file, a pipe).
 */
export function resolveLogFormat(
  format: ServiceConfig['logFormat'],
  stdout: { isTTY?: boolean } = process.stdout,
): 'pretty' | 'json' {
  if (format === 'auto') return stdout.isTTY ? 'pretty' : 'json';
  return format;
}

/** The stream for a format: undefined = pino's own JSON on stdout. */
export function logDestination(format: ServiceConfig['logFormat']): DestinationStream | undefined {
  if (resolveLogFormat(format) === 'json') return undefined;
  // sync: a line is on the terminal before the next statement runs, as with pino's own stdout.
  return pretty({
    sync: true,
    singleLine: true,
    colorize: Boolean(process.stdout.isTTY),
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
  });
}
