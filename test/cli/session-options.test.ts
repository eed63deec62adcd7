// `renderbridge service`'s dashboard session options and their environment variables: the
// ServiceConfig defaults, flags beating the environment, bad values refused by name, --help.
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addSessionOptions, sessionConfig, type SessionOptions } from '../../cli/session-options.js';
import { registerServiceCommand } from '../../cli/service.js';
import { defaultConfig } from '../../service/config-defaults.js';

const VARS = ['RENDERBRIDGE_SESSION_IDLE_MINUTES', 'RENDERBRIDGE_SESSION_MAX_HOURS'] as const;

beforeEach(() => {
  for (const v of VARS) delete process.env[v];
});
afterEach(() => {
  for (const v of VARS) delete process.env[v];
});

async function configFrom(argv: string[]) {
  let seen: SessionOptions | undefined;
  const cmd = addSessionOptions(new Command('x').exitOverride().configureOutput({ writeErr: () => undefined })).action(
    (o: SessionOptions) => void (seen = o),
  );
  await cmd.parseAsync(argv, { from: 'user' });
  return sessionConfig(seen!);
}

describe('dashboard session options', () => {
  it('default to the ServiceConfig defaults: 30 idle minutes, 12 hours at most', async () => {
    const d = defaultConfig();
    expect(await configFrom([])).toEqual({
      sessionIdleMinutes: d.sessionIdleMinutes,
      sessionMaxHours: d.sessionMaxHours,
    });
    expect(await configFrom([])).toEqual({ sessionIdleMinutes: 30, sessionMaxHours: 12 });
  });

  it('take flags and environment variables, the flag first', async () => {
    process.env.RENDERBRIDGE_SESSION_IDLE_MINUTES = '5';
    process.env.RENDERBRIDGE_SESSION_MAX_HOURS = '0.5';
    expect(await configFrom([])).toEqual({ sessionIdleMinutes: 5, sessionMaxHours: 0.5 });
    expect(await configFrom(['--session-idle-minutes', '90', '--session-max-hours', '24'])).toEqual({
      sessionIdleMinutes: 90,
      sessionMaxHours: 24,
    });
  });

  it('refuses values that are not a duration, naming the unit', async () => {
    await expect(configFrom(['--session-idle-minutes', '0'])).rejects.toThrow(/minutes above 0/);
    await expect(configFrom(['--session-max-hours', 'soon'])).rejects.toThrow(/hours above 0/);
    process.env.RENDERBRIDGE_SESSION_MAX_HOURS = '-1';
    await expect(configFrom([])).rejects.toThrow(/hours above 0/);
  });

  it('are listed in renderbridge service --help with their defaults and variables', () => {
    const program = new Command('renderbridge');
    registerServiceCommand(program);
    const help = program.commands
      .find((c) => c.name() === 'service')!
      .helpInformation()
      .replace(/\s+/g, ' ');
    expect(help).toMatch(/--session-idle-minutes <minutes>.*\(default: 30, env: RENDERBRIDGE_SESSION_IDLE_MINUTES\)/);
    expect(help).toMatch(/--session-max-hours <hours>.*\(default: 12, env: RENDERBRIDGE_SESSION_MAX_HOURS\)/);
  });
});
