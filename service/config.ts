// The settings of the reference service, as ServiceConfig; their defaults are config-defaults.ts's.

/** S3-compatible storage for uploads and outputs. Credentials come from the usual AWS environment variables. */
export interface S3Settings {
  /** Endpoint URL, e.g. `http://minio:9000`. Default: AWS itself for the region. */
  endpoint: string | undefined;
  bucket: string;
  /** Default `us-east-1`. */
  region: string;
  /**
   * Path-style URLs (`endpoint/bucket/key`), which most S3-compatible servers need.
   * Default true when `endpoint` is set.
   */
  forcePathStyle: boolean;
  /** Key prefix inside the bucket, so several deployments can share one. Default none. */
  prefix: string;
  /**
   * Access key from the config file (`s3.accessKeyId`). Default none: the AWS SDK's chain
   * (AWS_ACCESS_KEY_ID, ~/.aws, instance role).
   */
  accessKeyId?: string;
  /** Secret key from the config file, with accessKeyId. Default none. */
  secretAccessKey?: string;
}

/** Settings of the reference service. Every field has a default; see docs/reference/configuration.md. */
export interface ServiceConfig {
  /** Interface to listen on. Default `127.0.0.1`: expose it deliberately (e.g. `0.0.0.0` behind TLS). */
  host: string;
  /** TCP port. Default `8420`; `0` picks a free one. */
  port: number;
  /**
   * Folder for the SQLite database, stored objects and the URL-signing secret. Default
   * `$XDG_DATA_HOME/renderbridge/service` (`~/.local/share/renderbridge/service`): see defaultDataDir.
   */
  dataDir: string;
  /** Origin used in presigned URLs, e.g. `https://render.example.com`. Default: `http://HOST:PORT` as listened. */
  publicUrl: string | undefined;
  /**
   * A port of its own for the internal worker API (`/internal/worker/v1`); the public listener then
   * does not serve it, so it can stay on a farm-only network. Default none: the public listener serves it.
   */
  workerApiPort: number | undefined;
  /** Interface of the worker API's own listener (with workerApiPort). Default: `host`. */
  workerApiHost: string | undefined;
  /**
   * Worker API requests per worker token per rate-limit window, apart from API keys'
   * budgets (per instance). Default 6000.
   */
  workerApiRateLimitMax: number;
  /** Lifetime of an upload URL, seconds. Default 21600 (6 h): long enough for a 5 GiB upload on a slow line. */
  uploadUrlTtlSeconds: number;
  /** Lifetime of a signed download URL, seconds. Default 3600. */
  downloadUrlTtlSeconds: number;
  /** Largest accepted upload, bytes. Default 5 GiB - 1 (the spec: "below 5 GiB"). Tests lower it. */
  maxUploadBytes: number;
  /** Largest JSON request body, bytes. Default 1 MiB. */
  bodyLimitBytes: number;
  /** Requests per API key per window before 429. Default 1200. */
  rateLimitMax: number;
  /** Rate-limit window, milliseconds. Default 60000. */
  rateLimitWindowMs: number;
  /**
   * Failed authentications one remote address may make per `authFailureWindowMs` before its
   * failures answer 429 RATE_LIMITED instead of 401; valid keys are never refused
   * (`--auth-failure-limit`). Default 60.
   */
  authFailureLimit: number;
  /** Window of authFailureLimit, milliseconds (`--auth-failure-window`). Default 60000. */
  authFailureWindowMs: number;
  /**
   * Streams (log follows, GET /events) one API key may hold open on this process (`--max-streams-per-key`). Default 16.
   */
  maxStreamsPerKey: number;
  /** Streams this process holds open, all keys together (`--max-streams`). Default 1000. */
  maxStreams: number;
  /**
   * Longest a stream stays open, seconds; it then ends saying the client may reconnect
   * (`--stream-max-duration`). Default 3600.
   */
  streamMaxSeconds: number;
  /**
   * A log follow whose job showed no new bytes or change this long ends, saying so
   * (`--log-follow-idle`), seconds. Default 1800.
   */
  logFollowIdleSeconds: number;
  /**
   * Price per hour of rendering by device, for the estimate extension's cost: `CPU=0.4,OPTIX=2.5`,
   * `GPU=` for any GPU device (`--estimate-rates`). Default '' (no price: estimates give no cost).
   */
  estimateRates: string;
  /**
   * Bytes one workspace may keep stored: completed uploads, blobs and job outputs. New uploads,
   * blob queries and commits past it answer 413 STORAGE_QUOTA_EXCEEDED (`--workspace-storage-quota`). Default 1 TiB.
   */
  workspaceStorageQuotaBytes: number;
  /** Days outputs stay downloadable after completion. Default 30. */
  outputRetentionDays: number;
  /** Days a finished task stays in the queue (for looking into a job) before it is deleted. Default 7. */
  finishedTaskRetentionDays: number;
  /**
   * The content-addressed upload extension (POST /uploads/blobs/query, POST /uploads/commit and
   * the blob part PUTs, listed by GET /extensions). Off (`--no-blob-uploads`,
   * `RENDERBRIDGE_BLOB_UPLOADS=0`): its routes answer 404 and GET /extensions lists none; the
   * spec's upload flow is unchanged either way. Default true.
   */
  blobUploads: boolean;
  /**
   * Raw bytes per part of a blob; a blob of at most this size is one PUT (`--blob-part-size`,
   * `RENDERBRIDGE_BLOB_PART_SIZE`). Default 8 MiB.
   */
  blobPartSizeBytes: number;
  /**
   * Days a blob stays stored after its last use once no live upload or job references it; also
   * how long the parts of an abandoned upload are kept (`--blob-retention-days`,
   * `RENDERBRIDGE_BLOB_RETENTION_DAYS`). Default 30.
   */
  blobRetentionDays: number;
  /**
   * Minutes a dashboard session lasts without a request before it ends on the server
   * (`--session-idle-minutes`, `RENDERBRIDGE_SESSION_IDLE_MINUTES`). Default 30.
   */
  sessionIdleMinutes: number;
  /**
   * Hours a dashboard session lasts at most, however active; then the person signs in again with
   * a key (`--session-max-hours`, `RENDERBRIDGE_SESSION_MAX_HOURS`). Default 12.
   */
  sessionMaxHours: number;
  /**
   * Render slots of the in-process worker: `auto` = one per NVIDIA GPU, or one on the CPU;
   * a number = that many CPU slots when there is no GPU; 0 = no worker in this process (run
   * `renderbridge worker` elsewhere). Default `auto`.
   */
  workers: number | 'auto';
  /**
   * How render slots run Blender (`--render-mode`, `RENDERBRIDGE_RENDER_MODE`): `warm` keeps one
   * Blender per slot and job with the scene loaded and hands it frames one by one; `chunked` starts
   * one Blender per chunk of frames, loading the scene each time. Default `warm`.
   */
  renderMode: 'warm' | 'chunked';
  /**
   * Seconds a warm Blender with no frame to render waits for more of its job before it is ended
   * (`--warm-idle`, `RENDERBRIDGE_WARM_IDLE`). Default 60.
   */
  warmIdleSeconds: number;
  /**
   * Preemption at frame boundaries in warm mode (`--preempt-priority-gap`,
   * `RENDERBRIDGE_PREEMPT_PRIORITY_GAP`; extension scheduling): a slot rendering a job hands the rest
   * of its task back after the current frame when a task waiting for a slot has a priority at least
   * this much higher than the job's. Default 0: off, running frames always finish.
   */
  preemptPriorityGap: number;
  /**
   * Idle warm Blenders are ended at once while the memory available to new processes
   * (MemAvailable) is below this (`--warm-min-free-memory`, `RENDERBRIDGE_WARM_MIN_FREE_MEMORY`). Default 1 GiB.
   */
  warmMinFreeMemoryBytes: number;
  /**
   * Warm mode: seconds the Blender that rendered an estimate's sample frames waits for the job's
   * render, which takes it over (no second scene load, no second shader warm-up), apart from
   * `warmIdleSeconds` (`--estimate-warm-keep`, `RENDERBRIDGE_ESTIMATE_WARM_KEEP`; extension
   * estimate). It ends at once when the job is canceled, when memory runs short and when another
   * job needs the slot. 0: it ends with the estimate. Default 120.
   */
  estimateWarmKeepSeconds: number;
  /**
   * Most bytes of each task run's log kept, its first and last halves (`--task-log-max-bytes`,
   * `RENDERBRIDGE_TASK_LOG_MAX_BYTES`; task-logs extension). Default 16 MiB.
   */
  taskLogMaxBytes: number;
  /**
   * Extra Blender builds (`--blender PATH`, repeatable): executables, unpacked release folders or
   * system roots (blender/build-kind.ts); `RENDERBRIDGE_BLENDER_X_Y` and PATH's `blender` are added. Default none.
   */
  blenderPaths: string[];
  /**
   * Memory each CPU render slot may use, bytes (`--slot-memory`, `RENDERBRIDGE_SLOT_MEMORY`): each slot's
   * Blender runs in a memory cgroup of that size where the worker can make one. Default undefined: the
   * machine's memory (its cgroup's limit, else the RAM), not enforced per slot.
   */
  slotMemoryBytes?: number;
  /** This worker's tags (`--tag`, repeatable; `RENDERBRIDGE_WORKER_TAGS`, comma-separated). Default none. */
  workerTags: string[];
  /** Whether PATH's `blender` is a build too (`--no-blender-from-path`). Default true. */
  blenderFromPath: boolean;
  /**
   * Blender runs in a bubblewrap sandbox (`--no-sandbox` turns it off, with a warning at start that
   * doctor and the workers page repeat): no network, only the job's folder writable, no farm secret.
   * A worker refuses to start when the sandbox does not work. Default true.
   */
  sandbox: boolean;
  /**
   * Add-ons a project bundles (`--bundled-addons`): `sandboxed` enables them in the job's Blender,
   * which runs in the sandbox; `off` enables none, and validation says so in an ADDON_REFUSED
   * warning. `auto` is `sandboxed` when the sandbox is on, `off` with --no-sandbox: an add-on is
   * tenant code, and outside the sandbox it could read the farm's files. Default `auto`.
   */
  bundledAddons: 'auto' | 'sandboxed' | 'off';
  /**
   * CPU niceness added to every Blender a worker starts (`--render-nice`, 0-19): renders take the
   * CPU the service and the worker leave, so on a shared machine the API keeps answering while
   * every core renders (bench:attack). 0: the same priority as the service. Default 10.
   */
  renderNice: number;
  /** pino level. Default `info`. */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * Log lines (`--log-format`, `RENDERBRIDGE_LOG_FORMAT`): `pretty` one human line per event,
   * `json` one JSON object per line, `auto` pretty when stdout is a terminal. Default `auto`.
   */
  logFormat: 'auto' | 'pretty' | 'json';
  /**
   * Most frames per render task this process plans (`--chunk-frames`). Default none:
   * WorkerSettings.chunkFrames' default.
   */
  chunkFrames: number | undefined;
  /**
   * Seconds before the tasks of a worker that stopped heartbeating go back to the queue
   * (`--lease-seconds`). Default 30.
   */
  leaseSeconds: number;
  /** Limit for one validation's Blender run, seconds (`--analysis-timeout`). Default 300. */
  analysisTimeoutSeconds: number;
  /** Limit for one render chunk's Blender run (warm: a load, a frame), seconds (`--chunk-timeout`). Default 21600. */
  chunkTimeoutSeconds: number;
  /** A chunk whose Blender prints nothing this many seconds is taken as hung (`--chunk-idle-timeout`). Default 900. */
  chunkIdleTimeoutSeconds: number;
  /** Most files and folders one project may hold (`--unpack-max-entries`). Default 200000. */
  unpackMaxEntries: number;
  /** ffmpeg executable (`--ffmpeg`, `RENDERBRIDGE_FFMPEG`). Default `ffmpeg` on PATH. */
  ffmpeg: string | undefined;
  /** ffprobe executable (`--ffprobe`, `RENDERBRIDGE_FFPROBE`). Default `ffprobe` on PATH. */
  ffprobe: string | undefined;
  /**
   * PostgreSQL URL for state instead of SQLite under dataDir (`--database-url`,
   * `RENDERBRIDGE_DATABASE_URL`). Default none.
   */
  databaseUrl: string | undefined;
  /**
   * Redis URL for the BullMQ task queue instead of the database-backed queue (`--redis-url`,
   * `RENDERBRIDGE_REDIS_URL`). Default none.
   */
  redisUrl: string | undefined;
  /** Key prefix of the BullMQ queues, so deployments can share one Redis. Default `renderbridge`. */
  queuePrefix: string;
  /**
   * Fair-share weights set at start, `group=weight` each (`--share-weight`, `RENDERBRIDGE_SHARE_WEIGHTS`).
   * Default none: every workspace weighs 1 (or what `renderbridge admin share-weight` set).
   */
  shareWeights: string[];
  /** S3-compatible storage instead of files under dataDir (`--s3-bucket` and friends). Default none. */
  s3: S3Settings | undefined;
  /**
   * Worker token (`RENDERBRIDGE_WORKER_TOKEN`). On a worker: the token it presents to the worker
   * API, its own from `renderbridge admin create-worker-token`. On a service: the deprecated
   * farm-wide token, accepted for every job (not scoped to a worker's leases) with a warning at
   * start; per-worker tokens need no setting. Default none.
   */
  workerToken: string | undefined;
  /**
   * Bearer token /metrics requires (`RENDERBRIDGE_METRICS_TOKEN`); unset = open, for a scraper on a
   * private network. Default none.
   */
  metricsToken: string | undefined;
  /** Names this service instance in leases and logs. Default `HOST:PID:RANDOM`. */
  instanceId: string;
  /**
   * The per-job quota of the worker in this process (and of `renderbridge worker`): most bytes one
   * uploaded .zip may expand to; more fails the job with ZIP_TOO_LARGE (`--unpack-quota`,
   * `RENDERBRIDGE_UNPACK_QUOTA`). Default 64 GiB.
   */
  unpackQuotaBytes: number;
  /**
   * Disk space the work folder keeps free after unpacking, for the frames; an archive that would
   * leave less fails the task retryably (`--min-free-disk`, `RENDERBRIDGE_MIN_FREE_DISK`). Default 1 GiB.
   */
  minFreeDiskBytes: number;
  /**
   * Where the worker keeps the blobs of content-addressed uploads, so the next job with the same
   * textures does not download them again (`--blob-cache-dir`, `RENDERBRIDGE_BLOB_CACHE_DIR`).
   * Default `<dataDir>/blob-cache`: beside the work folder, whose disk it should share (projects
   * are then hard links into it, not copies).
   */
  blobCacheDir: string | undefined;
  /**
   * Most bytes the blob cache keeps; past it the least recently used blobs are removed
   * (`--blob-cache-size`, `RENDERBRIDGE_BLOB_CACHE_SIZE`). Default 50 GiB.
   */
  blobCacheMaxBytes: number;
}
