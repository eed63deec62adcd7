// Settings table entries: How long outputs and finished tasks are kept, and what the processes log.
// service/settings/table.ts puts the groups together in SETTING_GROUPS order.
import { BOTH, SERVICE, type Setting } from '../setting.js';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const RETENTION_SETTINGS: readonly Setting[] = [
  {
    key: 'outputRetentionDays',
    flag: '--output-retention-days <days>',
    kind: { type: 'number', above: 0 },
    group: 'Retention',
    commands: BOTH,
    defaultText: '30',
    help: 'days outputs stay downloadable after a job completes (set on the machine that finalizes the job)',
  },
  {
    key: 'finishedTaskRetentionDays',
    flag: '--finished-task-retention-days <days>',
    kind: { type: 'number', above: 0 },
    group: 'Retention',
    commands: SERVICE,
    defaultText: '7',
    help: 'days done, failed and canceled tasks stay in the queue before the retention sweep deletes them',
  },
];

export const LOGGING_SETTINGS: readonly Setting[] = [
  {
    key: 'logLevel',
    flag: '--log-level <level>',
    kind: { type: 'choice', values: LEVELS },
    group: 'Logging',
    commands: BOTH,
    defaultText: 'info',
    help:
      'pino log level; info logs writes and failed requests, debug also successful reads (polls) and per-frame ' +
      'events',
  },
  {
    key: 'logFormat',
    flag: '--log-format <format>',
    kind: { type: 'choice', values: ['auto', 'pretty', 'json'] },
    group: 'Logging',
    commands: BOTH,
    defaultText: 'auto',
    help:
      'pretty: one coloured line per event; json: one JSON object per line; auto: pretty when stdout is a ' +
      'terminal, else json',
  },
  {
    key: 'taskLogMaxBytes',
    flag: '--task-log-max-bytes <size>',
    kind: { type: 'bytes', min: 1024 },
    group: 'Logging',
    commands: BOTH,
    defaultText: '16MiB',
    help: "most bytes of each task run's log kept: its first and last halves (task-logs extension)",
  },
];
