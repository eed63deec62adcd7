// Options for how uploaded projects reach a worker's disk (.zip projects unpacked, blob projects
// assembled from the blob cache), on every command that runs a worker (`service` with its
// in-process worker, and `worker`). Each also reads an environment variable, so systemd units
// and containers need no flags.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { ServiceConfig } from '../service/config.js';
import { DEFAULT_BLOB_CACHE_MAX_BYTES } from '../service/config-defaults.js';
import { DEFAULT_UNPACK_LIMITS } from '../zip/rules.js';

export interface UnpackOptions {
  unpackQuota: number;
  minFreeDisk: number;
  blobCacheDir?: string;
  /** Absent only where a caller builds the options by hand: the default then applies. */
  blobCacheSize?: number;
}

const UNITS: Record<string, number> = { '': 1, b: 1, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };

/** A size in bytes: a whole number, optionally with a binary unit (`500MiB`, `64GiB`, `1TiB`). */
export function parseByteSize(v: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(v);
  const unit = m ? UNITS[(m[2] ?? '').toLowerCase()] : undefined;
  const n = m && unit !== undefined ? Math.round(Number(m[1]) * unit) : NaN;
  if (!Number.isSafeInteger(n))
    throw new InvalidArgumentError(`expected a size such as 68719476736, 500MiB or 64GiB, got "${v}"`);
  return n;
}

export function addUnpackOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--unpack-quota <size>', 'most bytes one uploaded .zip may expand to, per job (bytes, or e.g. 200GiB)')
        .env('RENDERBRIDGE_UNPACK_QUOTA')
        .argParser(parseByteSize)
        .default(DEFAULT_UNPACK_LIMITS.maxTotalBytes, '64GiB'),
    )
    .addOption(
      new Option(
        '--min-free-disk <size>',
        'disk space the work folder keeps free after unpacking; less fails the task retryably (bytes, or e.g. 5GiB)',
      )
        .env('RENDERBRIDGE_MIN_FREE_DISK')
        .argParser(parseByteSize)
        .default(DEFAULT_UNPACK_LIMITS.minFreeBytes, '1GiB'),
    )
    .addOption(
      new Option(
        '--blob-cache-dir <dir>',
        'where this worker keeps the blobs of content-addressed uploads (default: blob-cache beside the work ' +
          'folder, in the data folder)',
      ).env('RENDERBRIDGE_BLOB_CACHE_DIR'),
    )
    .addOption(
      new Option(
        '--blob-cache-size <size>',
        'most bytes the blob cache keeps; the least recently used blobs go first (bytes, or e.g. 200GiB)',
      )
        .env('RENDERBRIDGE_BLOB_CACHE_SIZE')
        .argParser(parseByteSize)
        .default(DEFAULT_BLOB_CACHE_MAX_BYTES, '50GiB'),
    );
}

/** The unpack part of a ServiceConfig; a quota of 0 would refuse every project, so it is an error. */
export function unpackConfig(o: UnpackOptions): Partial<ServiceConfig> {
  if (o.unpackQuota <= 0) throw new Error('--unpack-quota must be more than 0 bytes (RENDERBRIDGE_UNPACK_QUOTA)');
  return {
    unpackQuotaBytes: o.unpackQuota,
    minFreeDiskBytes: o.minFreeDisk,
    ...(o.blobCacheDir ? { blobCacheDir: o.blobCacheDir } : {}),
    ...(o.blobCacheSize !== undefined ? { blobCacheMaxBytes: o.blobCacheSize } : {}),
  };
}
