// Every setting of `renderbridge service` and `renderbridge worker`, once: its config-file key
// (the ServiceConfig field; `s3.*` nested), flag, environment variable, kind of value, help and
// default. Flag registration, the config file's schema, --print-config, the docs
// "Configuration" tables and deploy/systemd/renderbridge.env.example all come from this list
// (scripts/write-config-docs.ts; test/deploy/config-docs.test.ts fails when they drift).
import type { Kind } from './kinds.js';

export type SettingCommand = 'service' | 'worker';

export const SETTING_GROUPS = [
  'Listening and URLs',
  'Limits',
  'Retention',
  'Logging',
  'Engines',
  'Render slots',
  'Unpacking and the blob cache',
  'Content-addressed uploads',
  'Dashboard sessions',
  'Remote worker',
] as const;
export type SettingGroup = (typeof SETTING_GROUPS)[number];

export interface Setting {
  /** Key in the config file: a ServiceConfig field, `s3.<field>` for S3Settings, else the worker process's own. */
  key: string;
  /**
   * Flag with its placeholder (`--rate-limit <n>`); none for secrets, which never go on a command line (ps shows it).
   */
  flag?: string;
  /** Environment variable. Default: RENDERBRIDGE_ and the flag in upper snake case. */
  env?: string;
  kind: Kind;
  help: string;
  /** The default as --help and docs/reference/configuration.md show it. */
  defaultText: string;
  group: SettingGroup;
  commands: readonly SettingCommand[];
  /** Never printed: `value` entirely, `url` its password. */
  secret?: 'value' | 'url';
}

const BOTH = ['service', 'worker'] as const;
const SERVICE = ['service'] as const;
const WORKER = ['worker'] as const;
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const SETTINGS: readonly Setting[] = [
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
  {
    key: 'databaseUrl',
    flag: '--database-url <url>',
    kind: { type: 'url' },
    group: 'Engines',
    commands: BOTH,
    defaultText: 'none: SQLite in the data folder',
    secret: 'url',
    help: 'PostgreSQL URL for state instead of SQLite in --data-dir',
  },
  {
    key: 'redisUrl',
    flag: '--redis-url <url>',
    kind: { type: 'url' },
    group: 'Engines',
    commands: BOTH,
    defaultText: "none: the database's queue table",
    secret: 'url',
    help: 'Redis URL for the BullMQ task queue (run Redis with AOF)',
  },
  {
    key: 'queuePrefix',
    flag: '--queue-prefix <name>',
    kind: { type: 'text' },
    group: 'Engines',
    commands: BOTH,
    defaultText: 'renderbridge',
    help: 'key prefix of the BullMQ queues, so deployments can share one Redis',
  },
  {
    key: 's3.bucket',
    flag: '--s3-bucket <name>',
    kind: { type: 'text' },
    group: 'Engines',
    commands: BOTH,
    defaultText: 'none: files in the data folder',
    help: 'S3 bucket for uploads and outputs',
  },
  {
    key: 's3.endpoint',
    flag: '--s3-endpoint <url>',
    kind: { type: 'url' },
    group: 'Engines',
    commands: BOTH,
    defaultText: 'AWS',
    help: 'S3-compatible server, e.g. http://minio:9000 (path-style URLs)',
  },
  {
    key: 's3.region',
    flag: '--s3-region <region>',
    kind: { type: 'text' },
    group: 'Engines',
    commands: BOTH,
    defaultText: '$AWS_REGION, else us-east-1',
    help: 'S3 region',
  },
  {
    key: 's3.prefix',
    flag: '--s3-prefix <prefix>',
    kind: { type: 'text' },
    group: 'Engines',
    commands: BOTH,
    defaultText: 'none',
    help: 'key prefix inside the bucket',
  },
  {
    key: 's3.accessKeyId',
    env: 'AWS_ACCESS_KEY_ID',
    kind: { type: 'text' },
    group: 'Engines',
    commands: BOTH,
    defaultText: "the AWS SDK's chain",
    secret: 'value',
    help: 'S3 access key; unset: the AWS SDK finds credentials (variables, ~/.aws, instance role)',
  },
  {
    key: 's3.secretAccessKey',
    env: 'AWS_SECRET_ACCESS_KEY',
    kind: { type: 'text' },
    group: 'Engines',
    commands: BOTH,
    defaultText: "the AWS SDK's chain",
    secret: 'value',
    help: 'S3 secret key, with s3.accessKeyId',
  },
  {
    key: 'workerToken',
    env: 'RENDERBRIDGE_WORKER_TOKEN',
    kind: { type: 'text' },
    group: 'Engines',
    commands: BOTH,
    defaultText: 'none',
    secret: 'value',
    help:
      "worker: this worker's own token (renderbridge admin create-worker-token --name NAME); service: a " +
      'deprecated farm-wide token, accepted for every job with a warning at start',
  },
  {
    key: 'metricsToken',
    env: 'RENDERBRIDGE_METRICS_TOKEN',
    kind: { type: 'text' },
    group: 'Engines',
    commands: BOTH,
    defaultText: 'none: /metrics open',
    secret: 'value',
    help: 'bearer token /metrics asks for',
  },
  {
    key: 'workers',
    flag: '--workers <n>',
    kind: { type: 'workers' },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'auto',
    help:
      'render slots: auto (one per NVIDIA GPU, else one CPU slot), N CPU slots, or 0 for none in this process ' +
      '(service)',
  },
  {
    key: 'blenderPaths',
    flag: '--blender <path>',
    env: 'RENDERBRIDGE_BLENDER_PATHS',
    kind: { type: 'list', paths: true },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'none',
    help:
      'extra Blender builds (repeatable; the variable comma-separated): an executable, an unpacked release ' +
      'folder or a system root; RENDERBRIDGE_BLENDER_X_Y and PATH are searched too',
  },
  {
    key: 'sandbox',
    flag: '--no-sandbox',
    env: 'RENDERBRIDGE_SANDBOX',
    kind: { type: 'bool' },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'on',
    help:
      'run Blender in a bubblewrap sandbox (no network, only the job folder writable, no farm secrets); off: a ' +
      'warning at start, shown by doctor and the workers page. A worker refuses to start when the sandbox does ' +
      'not work',
  },
  {
    key: 'renderNice',
    flag: '--render-nice <n>',
    env: 'RENDERBRIDGE_RENDER_NICE',
    kind: { type: 'int', min: 0, max: 19 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '10',
    help:
      'CPU niceness added to every Blender the worker starts, so the service and the worker keep answering ' +
      'while renders take every core; 0: the same priority as the service',
  },
  {
    key: 'bundledAddons',
    flag: '--bundled-addons <policy>',
    env: 'RENDERBRIDGE_BUNDLED_ADDONS',
    kind: { type: 'choice', values: ['auto', 'sandboxed', 'off'] },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'auto',
    help:
      "add-ons a project bundles: sandboxed: enabled in the job's sandboxed Blender; off: never enabled " +
      '(validation warns ADDON_REFUSED); auto: sandboxed when the sandbox is on, else off',
  },
  {
    key: 'blenderFromPath',
    flag: '--no-blender-from-path',
    env: 'RENDERBRIDGE_BLENDER_FROM_PATH',
    kind: { type: 'bool' },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'on',
    help:
      'the `blender` found in PATH as a build; off: only --blender and RENDERBRIDGE_BLENDER_X_Y builds (a ' +
      'worker dedicated to other versions)',
  },
  {
    key: 'renderMode',
    flag: '--render-mode <mode>',
    kind: { type: 'choice', values: ['warm', 'chunked'] },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'warm',
    help:
      'warm: one Blender per slot and job keeps the scene loaded and renders the frames it claims; chunked: ' +
      'one Blender per chunk of frames',
  },
  {
    key: 'warmIdleSeconds',
    flag: '--warm-idle <seconds>',
    kind: { type: 'duration', unit: 's', min: 0 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '60',
    help: 'how long a warm Blender with no frame to render waits for more of its job before it is ended',
  },
  {
    key: 'warmMinFreeMemoryBytes',
    flag: '--warm-min-free-memory <size>',
    kind: { type: 'bytes', min: 0 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '1GiB',
    help: 'idle warm Blenders are ended while the memory available (MemAvailable) is below this',
  },
  {
    key: 'chunkFrames',
    flag: '--chunk-frames <n>',
    kind: { type: 'int', min: 1 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'warm 8, chunked 8-50 by slots',
    help:
      'most frames per render task when this process plans a render (warm: shrinking to 1 at the end of a job; ' +
      'a large farm sets 1-2)',
  },
  {
    key: 'leaseSeconds',
    flag: '--lease-seconds <seconds>',
    kind: { type: 'duration', unit: 's', min: 1 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '30',
    help: 'how soon the tasks of a worker that died go back to the queue',
  },
  {
    key: 'analysisTimeoutSeconds',
    flag: '--analysis-timeout <duration>',
    kind: { type: 'duration', unit: 's', min: 1 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '5m',
    help: "limit for one validation's Blender run",
  },
  {
    key: 'chunkTimeoutSeconds',
    flag: '--chunk-timeout <duration>',
    kind: { type: 'duration', unit: 's', min: 1 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '6h',
    help: "limit for one render chunk's Blender run; warm: for a scene load and for each frame",
  },
  {
    key: 'chunkIdleTimeoutSeconds',
    flag: '--chunk-idle-timeout <duration>',
    kind: { type: 'duration', unit: 's', min: 1 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '15m',
    help: 'a chunk (warm: a load or a frame) whose Blender prints nothing this long is taken as hung',
  },
  {
    key: 'ffmpeg',
    flag: '--ffmpeg <path>',
    kind: { type: 'path' },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'ffmpeg on PATH',
    help: 'ffmpeg executable for videos',
  },
  {
    key: 'ffprobe',
    flag: '--ffprobe <path>',
    kind: { type: 'path' },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'ffprobe on PATH',
    help: 'ffprobe executable',
  },
  {
    key: 'unpackQuotaBytes',
    flag: '--unpack-quota <size>',
    kind: { type: 'bytes', min: 1 },
    group: 'Unpacking and the blob cache',
    commands: BOTH,
    defaultText: '64GiB',
    help: 'most bytes one uploaded .zip may expand to, per job; more fails the job with ZIP_TOO_LARGE',
  },
  {
    key: 'minFreeDiskBytes',
    flag: '--min-free-disk <size>',
    kind: { type: 'bytes', min: 0 },
    group: 'Unpacking and the blob cache',
    commands: BOTH,
    defaultText: '1GiB',
    help: "space the work folder's disk keeps free after unpacking; less fails the task retryably",
  },
  {
    key: 'unpackMaxEntries',
    flag: '--unpack-max-entries <n>',
    kind: { type: 'int', min: 1 },
    group: 'Unpacking and the blob cache',
    commands: BOTH,
    defaultText: '200000',
    help: 'most files and folders one project may hold',
  },
  {
    key: 'blobCacheDir',
    flag: '--blob-cache-dir <dir>',
    kind: { type: 'path' },
    group: 'Unpacking and the blob cache',
    commands: BOTH,
    defaultText: '<data-dir>/blob-cache',
    help:
      "where the worker keeps the blobs of content-addressed uploads; on the work folder's disk projects are " +
      'hard links into it',
  },
  {
    key: 'blobCacheMaxBytes',
    flag: '--blob-cache-size <size>',
    kind: { type: 'bytes', min: 0 },
    group: 'Unpacking and the blob cache',
    commands: BOTH,
    defaultText: '50GiB',
    help: 'most bytes the blob cache keeps; the least recently used blobs go first',
  },
  {
    key: 'blobUploads',
    flag: '--no-blob-uploads',
    kind: { type: 'bool' },
    group: 'Content-addressed uploads',
    commands: SERVICE,
    defaultText: 'on',
    help: 'the content-addressed upload extension; off: its routes answer 404, GET /extensions lists none',
  },
  {
    key: 'blobPartSizeBytes',
    flag: '--blob-part-size <size>',
    kind: { type: 'bytes', min: 64 * 1024, max: 1024 ** 3 },
    group: 'Content-addressed uploads',
    commands: SERVICE,
    defaultText: '8MiB',
    help: 'raw bytes per part of an uploaded blob; a smaller blob is one PUT',
  },
  {
    key: 'blobRetentionDays',
    flag: '--blob-retention-days <days>',
    kind: { type: 'number', above: 0 },
    group: 'Content-addressed uploads',
    commands: SERVICE,
    defaultText: '30',
    help: 'days an unreferenced blob is kept after its last use; abandoned parts as long',
  },
  {
    key: 'sessionIdleMinutes',
    flag: '--session-idle-minutes <minutes>',
    kind: { type: 'number', above: 0 },
    group: 'Dashboard sessions',
    commands: SERVICE,
    defaultText: '30',
    help: 'a dashboard session without a request for this long ends',
  },
  {
    key: 'sessionMaxHours',
    flag: '--session-max-hours <hours>',
    kind: { type: 'number', above: 0 },
    group: 'Dashboard sessions',
    commands: SERVICE,
    defaultText: '12',
    help: 'a dashboard session ends this long after sign-in, however active',
  },
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

/** `--rate-limit` of `--rate-limit <n>`. */
export function longFlag(s: Setting): string | undefined {
  return s.flag?.split(' ')[0];
}

/** The variable of a setting: given, or RENDERBRIDGE_ and its flag in upper snake case. */
export function envName(s: Setting): string {
  if (s.env) return s.env;
  const long = longFlag(s)!.replace(/^--(no-)?/, '');
  return `RENDERBRIDGE_${long.replace(/-/g, '_').toUpperCase()}`;
}

export function settingsOf(command: SettingCommand): Setting[] {
  return SETTINGS.filter((s) => s.commands.includes(command));
}
