// Settings table entries only a remote `renderbridge worker` process has: the service it serves and
// its own /metrics. service/settings/table.ts puts the groups together in SETTING_GROUPS order.
import { WORKER, type Setting } from '../setting.js';

export const REMOTE_WORKER_SETTINGS: readonly Setting[] = [
  {
    key: 'serviceUrls',
    flag: '--service-url <url>',
    env: 'RENDERBRIDGE_WORKER_SERVICE_URLS',
    kind: { type: 'list' },
    group: 'Remote worker',
    commands: WORKER,
    defaultText: 'none: beside a service on the same data folder',
    help: 'service instances to report to (repeatable, failover; the variable comma-separated); needs the worker token',
  },
  {
    key: 'workerName',
    flag: '--name <name>',
    env: 'RENDERBRIDGE_WORKER_NAME',
    kind: { type: 'text' },
    group: 'Remote worker',
    commands: WORKER,
    defaultText: 'the host name',
    help: 'this machine in the per-job blocklist and metrics',
  },
  {
    key: 'metricsPort',
    flag: '--metrics-port <port>',
    kind: { type: 'int', min: 0, max: 65535 },
    group: 'Remote worker',
    commands: WORKER,
    defaultText: 'none: no /metrics',
    help: 'serve Prometheus /metrics on this port (0 = any free one)',
  },
  {
    key: 'metricsHost',
    flag: '--metrics-host <host>',
    kind: { type: 'text' },
    group: 'Remote worker',
    commands: WORKER,
    defaultText: '127.0.0.1',
    help: 'interface for /metrics',
  },
];
