// Options that choose the engines (PostgreSQL, Redis, S3) instead of the embedded defaults.
// Each also reads an environment variable, so systemd units and containers need no flags.
import { Option, type Command } from 'commander';
import type { ServiceConfig } from '../service/config.js';

export interface EngineOptions {
  databaseUrl?: string;
  redisUrl?: string;
  queuePrefix?: string;
  s3Endpoint?: string;
  s3Bucket?: string;
  s3Region?: string;
  s3Prefix?: string;
}

const env = (name: string) => process.env[name] || undefined;

/** `--database-url` alone (admin commands only touch state). */
export function databaseOption(): Option {
  return new Option('--database-url <url>', 'PostgreSQL URL for state instead of SQLite in --data-dir (env RENDERBRIDGE_DATABASE_URL)').default(
    env('RENDERBRIDGE_DATABASE_URL'),
    env('RENDERBRIDGE_DATABASE_URL') ? 'RENDERBRIDGE_DATABASE_URL' : undefined,
  );
}

export function addEngineOptions(cmd: Command): Command {
  return cmd
    .addOption(databaseOption())
    // The default comes from the environment; help names the variable, never its value (a password).
    .addOption(
      new Option('--redis-url <url>', 'Redis URL for the BullMQ task queue (env RENDERBRIDGE_REDIS_URL)').default(
        env('RENDERBRIDGE_REDIS_URL'),
        env('RENDERBRIDGE_REDIS_URL') ? 'RENDERBRIDGE_REDIS_URL' : undefined,
      ),
    )
    .option('--queue-prefix <name>', 'key prefix of the BullMQ queues (env RENDERBRIDGE_QUEUE_PREFIX)', env('RENDERBRIDGE_QUEUE_PREFIX') ?? 'renderbridge')
    .option('--s3-bucket <name>', 'S3 bucket for uploads and outputs instead of files in --data-dir (env RENDERBRIDGE_S3_BUCKET)', env('RENDERBRIDGE_S3_BUCKET'))
    .option('--s3-endpoint <url>', 'S3-compatible endpoint, e.g. http://minio:9000 (env RENDERBRIDGE_S3_ENDPOINT; default AWS)', env('RENDERBRIDGE_S3_ENDPOINT'))
    .option('--s3-region <region>', 'S3 region (env RENDERBRIDGE_S3_REGION)', env('RENDERBRIDGE_S3_REGION') ?? env('AWS_REGION') ?? 'us-east-1')
    .option('--s3-prefix <prefix>', 'key prefix inside the bucket (env RENDERBRIDGE_S3_PREFIX)', env('RENDERBRIDGE_S3_PREFIX') ?? '');
}

/** The engine part of a ServiceConfig; S3 options without a bucket are an error, not ignored. */
export function engineConfig(o: EngineOptions): Partial<ServiceConfig> {
  if (!o.s3Bucket && o.s3Endpoint) throw new Error('--s3-endpoint needs --s3-bucket (or RENDERBRIDGE_S3_BUCKET): which bucket should hold the files?');
  return {
    databaseUrl: o.databaseUrl,
    redisUrl: o.redisUrl,
    ...(o.queuePrefix ? { queuePrefix: o.queuePrefix } : {}),
    s3: o.s3Bucket
      ? { bucket: o.s3Bucket, endpoint: o.s3Endpoint, region: o.s3Region ?? 'us-east-1', forcePathStyle: o.s3Endpoint !== undefined, prefix: o.s3Prefix ?? '' }
      : undefined,
    workerToken: env('RENDERBRIDGE_WORKER_TOKEN'),
    metricsToken: env('RENDERBRIDGE_METRICS_TOKEN'),
  };
}
