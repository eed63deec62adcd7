// Settings table entries: where the service listens, the URLs it gives out, where it keeps data.
// service/settings/table.ts puts the groups together in SETTING_GROUPS order.
import { BOTH, SERVICE, type Setting } from '../setting.js';

export const LISTENING_SETTINGS: readonly Setting[] = [
  {
    key: 'host',
    flag: '--host <host>',
    kind: { type: 'text' },
    group: 'Listening and URLs',
    commands: SERVICE,
    defaultText: '127.0.0.1',
    help: 'interface to listen on; expose it deliberately (e.g. 0.0.0.0 behind a TLS proxy)',
  },
  {
    key: 'port',
    flag: '--port <port>',
    kind: { type: 'int', min: 0, max: 65535 },
    group: 'Listening and URLs',
    commands: SERVICE,
    defaultText: '8420',
    help: 'TCP port (0 = any free one)',
  },
  {
    key: 'workerApiPort',
    flag: '--worker-api-port <port>',
    kind: { type: 'int', min: 0, max: 65535 },
    group: 'Listening and URLs',
    commands: SERVICE,
    defaultText: 'none: on the public listener',
    help:
      'serve the internal worker API (/internal/worker/v1) on a listener of its own, e.g. on a farm-only ' +
      'network; the public listener then does not serve it',
  },
  {
    key: 'workerApiHost',
    flag: '--worker-api-host <host>',
    kind: { type: 'text' },
    group: 'Listening and URLs',
    commands: SERVICE,
    defaultText: 'the --host',
    help: 'interface of the worker API listener (with --worker-api-port)',
  },
  {
    key: 'publicUrl',
    flag: '--public-url <url>',
    kind: { type: 'url' },
    group: 'Listening and URLs',
    commands: SERVICE,
    defaultText: 'http://HOST:PORT',
    help:
      'origin clients reach the service at (behind a proxy), used in presigned URLs; https makes the dashboard ' +
      'cookie Secure',
  },
  {
    key: 'dataDir',
    flag: '--data-dir <dir>',
    kind: { type: 'path' },
    group: 'Listening and URLs',
    commands: BOTH,
    defaultText: '$XDG_DATA_HOME/renderbridge/service',
    help:
      'SQLite database, stored files, URL-signing secret, work folder (a remote worker: its work folder, ' +
      'default ./.renderbridge/worker)',
  },
  {
    key: 'instanceId',
    flag: '--instance-id <name>',
    kind: { type: 'text' },
    group: 'Listening and URLs',
    commands: SERVICE,
    defaultText: 'HOST:PID:RANDOM',
    help: 'names this service instance in leases and logs',
  },
];
