// The default of every setting of the reference service (ServiceConfig in config.ts), and the
// data folders it looks at.
import { randomBytes } from 'node:crypto';
import { homedir, hostname } from 'node:os';
import path from 'node:path';
import { MAX_UPLOAD_BYTES } from '../shared/constants.js';
import { DEFAULT_UNPACK_LIMITS } from '../zip/rules.js';
import type { ServiceConfig } from './config.js';

/**
 * The data folder when neither `--data-dir` nor RENDERBRIDGE_DATA_DIR names one:
 * `$XDG_DATA_HOME/renderbridge/service`, else `~/.local/share/renderbridge/service`. It never
 * depends on the current folder, so `renderbridge admin` run from anywhere finds the database of
 * a service started elsewhere (before, `./.renderbridge/service` made each folder its own farm).
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_DATA_HOME || path.join(homedir(), '.local', 'share'), 'renderbridge', 'service');
}

/** The blob cache's size when none is set (`--blob-cache-size`): room for a studio's working set. */
export const DEFAULT_BLOB_CACHE_MAX_BYTES = 50 * 1024 ** 3;

/**
 * The data folder the first Renderbridge versions used, relative to the current folder:
 * only looked at to warn about it.
 */
export const LEGACY_DATA_DIR = path.join('.renderbridge', 'service');

export function defaultConfig(overrides: Partial<ServiceConfig> = {}): ServiceConfig {
  return {
    host: '127.0.0.1',
    port: 8420,
    dataDir: defaultDataDir(),
    publicUrl: undefined,
    workerApiPort: undefined,
    workerApiHost: undefined,
    workerApiRateLimitMax: 6000,
    uploadUrlTtlSeconds: 6 * 3600,
    downloadUrlTtlSeconds: 3600,
    maxUploadBytes: MAX_UPLOAD_BYTES,
    bodyLimitBytes: 1024 * 1024,
    rateLimitMax: 1200,
    rateLimitWindowMs: 60_000,
    authFailureLimit: 60,
    authFailureWindowMs: 60_000,
    maxStreamsPerKey: 16,
    maxStreams: 1000,
    streamMaxSeconds: 3600,
    logFollowIdleSeconds: 1800,
    estimateRates: '',
    workspaceStorageQuotaBytes: 2 ** 40,
    outputRetentionDays: 30,
    finishedTaskRetentionDays: 7,
    blobUploads: true,
    blobPartSizeBytes: 8 * 1024 * 1024,
    blobRetentionDays: 30,
    sessionIdleMinutes: 30,
    sessionMaxHours: 12,
    workers: 'auto',
    renderMode: 'warm',
    warmIdleSeconds: 60,
    warmMinFreeMemoryBytes: 2 ** 30,
    estimateWarmKeepSeconds: 120,
    preemptPriorityGap: 0,
    taskLogMaxBytes: 16 * 2 ** 20,
    blenderPaths: [],
    workerTags: [],
    blenderFromPath: true,
    sandbox: true,
    renderNice: 10,
    bundledAddons: 'auto',
    logLevel: 'info',
    logFormat: 'auto',
    chunkFrames: undefined,
    leaseSeconds: 30,
    analysisTimeoutSeconds: 300,
    chunkTimeoutSeconds: 6 * 3600,
    chunkIdleTimeoutSeconds: 900,
    unpackMaxEntries: DEFAULT_UNPACK_LIMITS.maxEntries,
    ffmpeg: undefined,
    ffprobe: undefined,
    databaseUrl: undefined,
    redisUrl: undefined,
    queuePrefix: 'renderbridge',
    shareWeights: [],
    s3: undefined,
    workerToken: undefined,
    metricsToken: undefined,
    instanceId: `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
    unpackQuotaBytes: DEFAULT_UNPACK_LIMITS.maxTotalBytes,
    minFreeDiskBytes: DEFAULT_UNPACK_LIMITS.minFreeBytes,
    blobCacheDir: undefined,
    blobCacheMaxBytes: DEFAULT_BLOB_CACHE_MAX_BYTES,
    ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)),
  };
}
