// How the supervisor tests launch a real `renderbridge daemon` (from source, through tsx): on any
// free port, in its own state folder, pointed at a service address nothing listens on, with no
// D-Bus session and no key, so it starts anyway and reports "keychain unavailable".
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DaemonSupervisor } from '../../electron/core/supervisor.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

type Launch = Pick<ConstructorParameters<typeof DaemonSupervisor>[0], 'command' | 'args' | 'stateDir' | 'env'>;

/** The supervisor's command, arguments, state folder and environment for such a daemon. */
export function realDaemonLaunch(stateDir: string, logLevel: 'info' | 'warn'): Launch {
  const { DBUS_SESSION_BUS_ADDRESS: _bus, RENDERBRIDGE_API_KEY: _key, ...env } = process.env;
  return {
    command: process.execPath,
    args: [
      '--import',
      'tsx',
      path.join(ROOT, 'cli/index.ts'),
      'daemon',
      '--port',
      '0',
      '--state-dir',
      stateDir,
      '--service',
      'http://127.0.0.1:9/api/external/v1',
      '--log-level',
      logLevel,
    ],
    stateDir,
    env,
  };
}
