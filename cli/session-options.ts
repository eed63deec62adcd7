// `renderbridge service` options of dashboard sessions. Each also reads an environment variable,
// so systemd units and containers need no flags.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { ServiceConfig } from '../service/config.js';

export interface SessionOptions {
  sessionIdleMinutes: number;
  sessionMaxHours: number;
}

function positive(unit: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`a number of ${unit} above 0, got "${v}"`);
    return n;
  };
}

export function addSessionOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--session-idle-minutes <minutes>', 'a dashboard session without a request for this long ends')
        .env('RENDERBRIDGE_SESSION_IDLE_MINUTES')
        .argParser(positive('minutes'))
        .default(30),
    )
    .addOption(
      new Option('--session-max-hours <hours>', 'a dashboard session ends this long after sign-in, however active')
        .env('RENDERBRIDGE_SESSION_MAX_HOURS')
        .argParser(positive('hours'))
        .default(12),
    );
}

export function sessionConfig(o: SessionOptions): Partial<ServiceConfig> {
  return { sessionIdleMinutes: o.sessionIdleMinutes, sessionMaxHours: o.sessionMaxHours };
}
