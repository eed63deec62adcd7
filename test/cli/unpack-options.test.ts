// `--unpack-quota` and `--min-free-disk` (and their environment variables) on the commands that
// run a worker: parsed, shown with their defaults in --help, and carried through ServiceConfig
// and the worker's settings into the unpack itself.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addUnpackOptions, parseByteSize, unpackConfig, type UnpackOptions } from '../../cli/unpack-options.js';
import { defaultConfig } from '../../service/config-defaults.js';
import { defaultWorkerSettings } from '../../service/worker/runtime/env.js';
import { DiskSpaceError, UnpackError } from '../../zip/errors.js';
import { unpackSource } from '../../zip/unpack.js';
import { buildZip } from '../zip/zip-writer.js';
import { serviceAndWorkerHelp } from '../helpers/command-help.js';

const GiB = 1024 ** 3;
const VARS = ['RENDERBRIDGE_UNPACK_QUOTA', 'RENDERBRIDGE_MIN_FREE_DISK'] as const;
let base: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'rb-unpack-options-'));
  for (const v of VARS) delete process.env[v];
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
  for (const v of VARS) delete process.env[v];
});

/** The options as a command that takes them parses `argv` (with the environment as it is now). */
async function parse(argv: string[]): Promise<UnpackOptions> {
  let seen: UnpackOptions | undefined;
  const cmd = addUnpackOptions(new Command('x').exitOverride().configureOutput({ writeErr: () => undefined })).action(
    (o: UnpackOptions) => void (seen = o),
  );
  await cmd.parseAsync(argv, { from: 'user' });
  return seen!;
}

/** The unpack limits a worker started with these options uses. */
function limitsFrom(o: UnpackOptions) {
  return defaultWorkerSettings(defaultConfig(unpackConfig(o))).unpackLimits;
}

describe('parseByteSize', () => {
  it('takes bytes or binary units', () => {
    expect(parseByteSize('1000')).toBe(1000);
    expect(parseByteSize('500MiB')).toBe(500 * 1024 ** 2);
    expect(parseByteSize('64GiB')).toBe(64 * GiB);
    expect(parseByteSize('1.5gib')).toBe(1.5 * GiB);
    expect(parseByteSize('2TiB')).toBe(2 * 1024 * GiB);
    for (const bad of ['', 'abc', '-1', '10GB', '1e9']) expect(() => parseByteSize(bad)).toThrow(/expected a size/);
  });
});

describe('--unpack-quota and --min-free-disk', () => {
  it('default to 64 GiB and 1 GiB, in --help of service and worker too', async () => {
    expect(limitsFrom(await parse([]))).toEqual({ maxEntries: 200_000, maxTotalBytes: 64 * GiB, minFreeBytes: GiB });
    for (const help of Object.values(serviceAndWorkerHelp())) {
      expect(help).toContain('--unpack-quota <size>');
      expect(help).toContain('default: 64GiB, env: RENDERBRIDGE_UNPACK_QUOTA');
      expect(help).toContain('--min-free-disk <size>');
      expect(help).toContain('default: 1GiB, env: RENDERBRIDGE_MIN_FREE_DISK');
    }
  });

  it('come from the environment, and a flag wins over it', async () => {
    process.env.RENDERBRIDGE_UNPACK_QUOTA = '100GiB';
    process.env.RENDERBRIDGE_MIN_FREE_DISK = '5GiB';
    expect(limitsFrom(await parse([]))).toEqual({
      maxEntries: 200_000,
      maxTotalBytes: 100 * GiB,
      minFreeBytes: 5 * GiB,
    });
    expect(limitsFrom(await parse(['--unpack-quota', '200GiB']))).toEqual({
      maxEntries: 200_000,
      maxTotalBytes: 200 * GiB,
      minFreeBytes: 5 * GiB,
    });
  });

  it('refuse a bad size as a usage error, and a quota of 0', async () => {
    await expect(parse(['--unpack-quota', 'lots'])).rejects.toThrow(/expected a size/);
    process.env.RENDERBRIDGE_MIN_FREE_DISK = 'some';
    await expect(parse([])).rejects.toThrow(/RENDERBRIDGE_MIN_FREE_DISK/);
    delete process.env.RENDERBRIDGE_MIN_FREE_DISK;
    expect(() => unpackConfig({ unpackQuota: 0, minFreeDisk: 0 })).toThrow(/more than 0/);
  });

  it('reach the unpack: a quota flag refuses a bigger archive, a free-disk flag asks for more room', async () => {
    const source = join(base, 'project.zip');
    writeFileSync(source, buildZip([{ name: 'scene.blend', data: 'x'.repeat(5000) }]));
    const withLimits = (limits: ReturnType<typeof limitsFrom>) => (limits ? { limits } : {});
    const unpack = (o: UnpackOptions) =>
      unpackSource({ source, fileType: 'zip', jobDir: join(base, 'job'), ...withLimits(limitsFrom(o)) });

    await expect(unpack(await parse(['--unpack-quota', '4096']))).rejects.toSatisfy(
      (e) => e instanceof UnpackError && e.code === 'ZIP_TOO_LARGE' && e.details.maxTotalBytes === 4096,
    );
    await expect(unpack(await parse(['--min-free-disk', `${Number.MAX_SAFE_INTEGER}`]))).rejects.toBeInstanceOf(
      DiskSpaceError,
    );
    expect((await unpack(await parse(['--unpack-quota', '5000']))).bytes).toBe(5000);
  });
});
