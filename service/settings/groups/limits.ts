// Settings table entries: Sizes, rates, stream counts and quotas: what one client or workspace may use.
// service/settings/table.ts puts the groups together in SETTING_GROUPS order.
import { SERVICE, type Setting } from '../setting.js';

export const LIMIT_SETTINGS: readonly Setting[] = [
  {
    key: 'uploadUrlTtlSeconds',
    flag: '--upload-url-ttl <duration>',
    kind: { type: 'duration', unit: 's', min: 60 },
    group: 'Limits',
    commands: SERVICE,
    defaultText: '6h',
    help: 'lifetime of an upload URL (seconds, or e.g. 2h): long enough for a 5 GiB upload on a slow line',
  },
  {
    key: 'downloadUrlTtlSeconds',
    flag: '--download-url-ttl <duration>',
    kind: { type: 'duration', unit: 's', min: 10 },
    group: 'Limits',
    commands: SERVICE,
    defaultText: '1h',
    help: 'lifetime of a signed download URL (seconds, or e.g. 15m)',
  },
  {
    key: 'maxUploadBytes',
    flag: '--max-upload-bytes <size>',
    kind: { type: 'bytes', min: 1 },
    group: 'Limits',
    commands: SERVICE,
    defaultText: '5GiB - 1',
    help: 'largest accepted upload (bytes, or e.g. 2GiB)',
  },
  {
    key: 'bodyLimitBytes',
    flag: '--body-limit <size>',
    kind: { type: 'bytes', min: 1024 },
    group: 'Limits',
    commands: SERVICE,
    defaultText: '1MiB',
    help: 'largest JSON request body (bytes, or e.g. 2MiB)',
  },
  {
    key: 'rateLimitMax',
    flag: '--rate-limit <n>',
    kind: { type: 'int', min: 1 },
    group: 'Limits',
    commands: SERVICE,
    defaultText: '1200',
    help: 'requests per API key per window before 429 RATE_LIMITED',
  },
  {
    key: 'workerApiRateLimitMax',
    flag: '--worker-api-rate-limit <n>',
    kind: { type: 'int', min: 1 },
    group: 'Limits',
    commands: SERVICE,
    defaultText: '6000',
    help:
      'worker API requests per worker token per window (per instance) before 429 RATE_LIMITED, apart from API ' +
      "keys' budgets",
  },
  {
    key: 'rateLimitWindowMs',
    flag: '--rate-limit-window <duration>',
    kind: { type: 'duration', unit: 'ms', min: 1000 },
    group: 'Limits',
    commands: SERVICE,
    defaultText: '1m',
    help: 'the rate-limit window (milliseconds, or e.g. 1m)',
  },
  {
    key: 'authFailureLimit',
    flag: '--auth-failure-limit <n>',
    kind: { type: 'int', min: 1 },
    group: 'Limits',
    commands: SERVICE,
    defaultText: '60',
    help:
      'failed authentications per remote address per window before they answer 429 RATE_LIMITED; valid keys ' +
      'are never refused',
  },
  {
    key: 'authFailureWindowMs',
    flag: '--auth-failure-window <duration>',
    kind: { type: 'duration', unit: 'ms', min: 1000 },
    group: 'Limits',
    commands: SERVICE,
    defaultText: '1m',
    help: 'the window of --auth-failure-limit (milliseconds, or e.g. 5m)',
  },
  {
    key: 'maxStreamsPerKey',
    flag: '--max-streams-per-key <n>',
    kind: { type: 'int', min: 1 },
    group: 'Limits',
    commands: SERVICE,
    defaultText: '16',
    help: 'log follows and event streams one API key may hold open on this process; more answer 429 TOO_MANY_STREAMS',
  },
  {
    key: 'maxStreams',
    flag: '--max-streams <n>',
    kind: { type: 'int', min: 1 },
    group: 'Limits',
    commands: SERVICE,
    defaultText: '1000',
    help: 'log follows and event streams this process holds open, all keys together',
  },
  {
    key: 'streamMaxSeconds',
    flag: '--stream-max-duration <duration>',
    kind: { type: 'duration', unit: 's', min: 1 },
    group: 'Limits',
    commands: SERVICE,
    defaultText: '1h',
    help: 'longest a stream stays open; it then ends saying why, and the client reconnects',
  },
  {
    key: 'estimateRates',
    flag: '--estimate-rates <rates>',
    kind: { type: 'text' },
    group: 'Limits',
    commands: SERVICE,
    defaultText: 'none: estimates give no cost',
    help:
      'price per hour of rendering by device for estimates (POST /jobs/{id}/estimate), e.g. CPU=0.4,OPTIX=2.5; ' +
      'GPU= covers any GPU device',
  },
  {
    key: 'logFollowIdleSeconds',
    flag: '--log-follow-idle <duration>',
    kind: { type: 'duration', unit: 's', min: 1 },
    group: 'Limits',
    commands: SERVICE,
    defaultText: '30m',
    help: 'a log follow whose job shows no new bytes or change this long ends, saying so',
  },
  {
    key: 'workspaceStorageQuotaBytes',
    flag: '--workspace-storage-quota <size>',
    kind: { type: 'bytes', min: 1 },
    group: 'Limits',
    commands: SERVICE,
    defaultText: '1TiB',
    help:
      'bytes one workspace may keep stored (uploads, blobs, job outputs); past it new uploads answer 413 ' +
      'STORAGE_QUOTA_EXCEEDED',
  },
];
