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

/** `--database-url` alone (admin commands only touch state). Help names the variable, never its value (a password). */
export function databaseOption(): Option {
  return new Option('--database-url <url>', 'PostgreSQL URL for state instead of SQLite in --data-dir').env(
    'RENDERBRIDGE_DATABASE_URL',
  );
}

// `.env()`: commander then knows a value came from the environment, so a config file
// (cli/settings.ts) fills in only what neither a flag nor a variable set.
export function addEngineOptions(cmd: Command): Command {
  return cmd
    .addOption(databaseOption())
    .addOption(new Option('--redis-url <url>', 'Redis URL for the BullMQ task queue').env('RENDERBRIDGE_REDIS_URL'))
    .addOption(
      new Option('--queue-prefix <name>', 'key prefix of the BullMQ queues')
        .env('RENDERBRIDGE_QUEUE_PREFIX')
        .default('renderbridge'),
    )
    .addOption(
      new Option('--s3-bucket <name>', 'S3 bucket for uploads and outputs instead of files in --data-dir').env(
        'RENDERBRIDGE_S3_BUCKET',
      ),
    )
    .addOption(
      new Option('--s3-endpoint <url>', 'S3-compatible endpoint, e.g. http://minio:9000 (default AWS)').env(
        'RENDERBRIDGE_S3_ENDPOINT',
      ),
    )
    .addOption(
      new Option('--s3-region <region>', 'S3 region (default $AWS_REGION, else us-east-1)')
        .env('RENDERBRIDGE_S3_REGION')
        .default(env('AWS_REGION') ?? 'us-east-1'),
    )
    .addOption(
      new Option('--s3-prefix <prefix>', 'key prefix inside the bucket').env('RENDERBRIDGE_S3_PREFIX').default(''),
    );
}

/** The engine part of a ServiceConfig; S3 options without a bucket are an error, not ignored. */
export function engineConfig(o: EngineOptions): Partial<ServiceConfig> {
  if (!o.s3Bucket && o.s3Endpoint)
    throw new Error('--s3-endpoint needs --s3-bucket (or RENDERBRIDGE_S3_BUCKET): which bucket should hold the files?');
  return {
    databaseUrl: o.databaseUrl,
    redisUrl: o.redisUrl,
    ...(o.queuePrefix ? { queuePrefix: o.queuePrefix } : {}),
    s3: o.s3Bucket
      ? {
          bucket: o.s3Bucket,
          endpoint: o.s3Endpoint,
          region: o.s3Region ?? 'us-east-1',
          forcePathStyle: o.s3Endpoint !== undefined,
          prefix: o.s3Prefix ?? '',
        }
      : undefined,
    workerToken: env('RENDERBRIDGE_WORKER_TOKEN'),
    metricsToken: env('RENDERBRIDGE_METRICS_TOKEN'),
  };
}
