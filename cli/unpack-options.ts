// Options for how uploaded .zip projects are unpacked, on every command that runs a worker
// (`service` with its in-process worker, and `worker`). Each also reads an environment variable,
// so systemd units and containers need no flags.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { ServiceConfig } from '../service/config.js';
import { DEFAULT_UNPACK_LIMITS } from '../zip/rules.js';

export interface UnpackOptions {
  unpackQuota: number;
  minFreeDisk: number;
}

const UNITS: Record<string, number> = { '': 1, b: 1, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };

/** A size in bytes: a whole number, optionally with a binary unit (`500MiB`, `64GiB`, `1TiB`). */
export function parseByteSize(v: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(v);
  const unit = m ? UNITS[(m[2] ?? '').toLowerCase()] : undefined;
  const n = m && unit !== undefined ? Math.round(Number(m[1]) * unit) : NaN;
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`expected a size such as 68719476736, 500MiB or 64GiB, got "${v}"`);
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
      new Option('--min-free-disk <size>', 'disk space the work folder keeps free after unpacking; less fails the task retryably (bytes, or e.g. 5GiB)')
        .env('RENDERBRIDGE_MIN_FREE_DISK')
        .argParser(parseByteSize)
        .default(DEFAULT_UNPACK_LIMITS.minFreeBytes, '1GiB'),
    );
}

/** The unpack part of a ServiceConfig; a quota of 0 would refuse every project, so it is an error. */
export function unpackConfig(o: UnpackOptions): Partial<ServiceConfig> {
  if (o.unpackQuota <= 0) throw new Error('--unpack-quota must be more than 0 bytes (RENDERBRIDGE_UNPACK_QUOTA)');
  return { unpackQuotaBytes: o.unpackQuota, minFreeDiskBytes: o.minFreeDisk };
}
