import { MAX_UPLOAD_BYTES } from '../shared/constants.js';

/** Settings of the reference service. Every field has a default; see README "Configuration". */
export interface ServiceConfig {
  /** Interface to listen on. Default `127.0.0.1`: expose it deliberately (e.g. `0.0.0.0` behind TLS). */
  host: string;
  /** TCP port. Default `8420`; `0` picks a free one. */
  port: number;
  /** Folder for the SQLite database, stored objects and the URL-signing secret. Default `./.renderbridge/service`. */
  dataDir: string;
  /** Origin used in presigned URLs, e.g. `https://render.example.com`. Default: `http://HOST:PORT` as listened. */
  publicUrl: string | undefined;
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
  /** Days outputs stay downloadable after completion. Default 30. */
  outputRetentionDays: number;
  /**
   * Render slots of the in-process worker: `auto` = one per NVIDIA GPU, or one on the CPU;
   * a number = that many CPU slots when there is no GPU; 0 = no worker in this process (run
   * `renderbridge worker` elsewhere). Default `auto`.
   */
  workers: number | 'auto';
  /** Extra Blender builds (`--blender PATH`, repeatable); `RENDERBRIDGE_BLENDER_X_Y` and PATH's `blender` are added. Default none. */
  blenderPaths: string[];
  /** pino level. Default `info`. */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

export function defaultConfig(overrides: Partial<ServiceConfig> = {}): ServiceConfig {
  return {
    host: '127.0.0.1',
    port: 8420,
    dataDir: './.renderbridge/service',
    publicUrl: undefined,
    uploadUrlTtlSeconds: 6 * 3600,
    downloadUrlTtlSeconds: 3600,
    maxUploadBytes: MAX_UPLOAD_BYTES,
    bodyLimitBytes: 1024 * 1024,
    rateLimitMax: 1200,
    rateLimitWindowMs: 60_000,
    outputRetentionDays: 30,
    workers: 'auto',
    blenderPaths: [],
    logLevel: 'info',
    ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)),
  };
}
