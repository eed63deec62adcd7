// `renderbridge service` options of the content-addressed upload extension. Each also reads an
// environment variable, so systemd units and containers need no flags.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { ServiceConfig } from '../service/config.js';
import { parseByteSize } from './unpack-options.js';

export interface BlobOptions {
  /** False only when --no-blob-uploads was given; the environment is read in blobConfig. */
  blobUploads: boolean;
  blobPartSize: number;
  blobRetentionDays: number;
}

const MIN_PART = 64 * 1024;
const MAX_PART = 1024 ** 3;

function parsePartSize(v: string): number {
  const n = parseByteSize(v);
  if (n < MIN_PART || n > MAX_PART) throw new InvalidArgumentError(`a blob part size from 64KiB to 1GiB, got "${v}"`);
  return n;
}

function parseDays(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`a number of days above 0, got "${v}"`);
  return n;
}

/** RENDERBRIDGE_BLOB_UPLOADS: 1/true/yes/on or 0/false/no/off; anything else is an error, not a guess. */
export function blobUploadsFromEnv(value: string | undefined): boolean {
  if (value === undefined || value.trim() === '') return true;
  const v = value.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new Error(`RENDERBRIDGE_BLOB_UPLOADS must be 1 or 0 (true/false, yes/no, on/off), not "${value}"`);
}

export function addBlobOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--no-blob-uploads',
        'turn the content-addressed upload extension off: its routes answer 404, GET /extensions lists none ' +
          '(env RENDERBRIDGE_BLOB_UPLOADS=0)',
      ),
    )
    .addOption(
      new Option(
        '--blob-part-size <size>',
        'raw bytes per part of an uploaded blob; a smaller blob is one PUT (bytes, or e.g. 16MiB)',
      )
        .env('RENDERBRIDGE_BLOB_PART_SIZE')
        .argParser(parsePartSize)
        .default(8 * 1024 * 1024, '8MiB'),
    )
    .addOption(
      new Option(
        '--blob-retention-days <days>',
        'days an unreferenced blob is kept after its last use, and abandoned parts are kept',
      )
        .env('RENDERBRIDGE_BLOB_RETENTION_DAYS')
        .argParser(parseDays)
        .default(30),
    );
}

/** The extension's part of a ServiceConfig: the flag --no-blob-uploads beats the environment. */
export function blobConfig(o: BlobOptions, env: NodeJS.ProcessEnv = process.env): Partial<ServiceConfig> {
  return {
    blobUploads: o.blobUploads === false ? false : blobUploadsFromEnv(env.RENDERBRIDGE_BLOB_UPLOADS),
    blobPartSizeBytes: o.blobPartSize,
    blobRetentionDays: o.blobRetentionDays,
  };
}
