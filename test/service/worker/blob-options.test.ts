// `--blob-cache-dir` and `--blob-cache-size` (and their environment variables) on the commands
// that run a worker: parsed, shown with their defaults in --help, and carried through
// ServiceConfig into the worker's blob cache settings (default: beside the work folder).
import path from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addUnpackOptions, unpackConfig, type UnpackOptions } from '../../../cli/unpack-options.js';
import { defaultConfig } from '../../../service/config-defaults.js';
import { defaultWorkerSettings } from '../../../service/worker/runtime/env.js';
import { serviceAndWorkerHelp } from '../../helpers/command-help.js';

const GiB = 1024 ** 3;
const VARS = ['RENDERBRIDGE_BLOB_CACHE_DIR', 'RENDERBRIDGE_BLOB_CACHE_SIZE'] as const;

beforeEach(() => {
  for (const v of VARS) delete process.env[v];
});
afterEach(() => {
  for (const v of VARS) delete process.env[v];
});

async function parse(argv: string[]): Promise<UnpackOptions> {
  let seen: UnpackOptions | undefined;
  const cmd = addUnpackOptions(new Command('x').exitOverride().configureOutput({ writeErr: () => undefined })).action(
    (o: UnpackOptions) => void (seen = o),
  );
  await cmd.parseAsync(argv, { from: 'user' });
  return seen!;
}

/** The blob cache settings of a worker started with these options on this data folder. */
function cacheFrom(o: UnpackOptions, dataDir = '/srv/rb') {
  const settings = defaultWorkerSettings(defaultConfig({ ...unpackConfig(o), dataDir }));
  return { ...settings.blobCache, workRoot: settings.workRoot };
}

describe('--blob-cache-dir and --blob-cache-size', () => {
  it('default to blob-cache beside the work folder and 50 GiB, in --help of service and worker too', async () => {
    const c = cacheFrom(await parse([]));
    expect(c).toEqual({
      dir: path.resolve('/srv/rb/blob-cache'),
      maxBytes: 50 * GiB,
      workRoot: path.resolve('/srv/rb/work'),
    });
    expect(path.dirname(c.dir)).toBe(path.dirname(c.workRoot));
    for (const help of Object.values(serviceAndWorkerHelp())) {
      expect(help).toContain('--blob-cache-dir <dir>');
      expect(help).toContain('env: RENDERBRIDGE_BLOB_CACHE_DIR');
      expect(help).toContain('--blob-cache-size <size>');
      expect(help).toContain('default: 50GiB, env: RENDERBRIDGE_BLOB_CACHE_SIZE');
    }
  });

  it('come from the environment, and a flag wins over it', async () => {
    process.env.RENDERBRIDGE_BLOB_CACHE_DIR = '/cache/blobs';
    process.env.RENDERBRIDGE_BLOB_CACHE_SIZE = '200GiB';
    expect(cacheFrom(await parse([]))).toMatchObject({ dir: path.resolve('/cache/blobs'), maxBytes: 200 * GiB });
    expect(cacheFrom(await parse(['--blob-cache-size', '1TiB', '--blob-cache-dir', '/fast/cache']))).toMatchObject({
      dir: path.resolve('/fast/cache'),
      maxBytes: 1024 * GiB,
    });
  });

  it('refuse a bad size as a usage error naming the variable', async () => {
    await expect(parse(['--blob-cache-size', 'lots'])).rejects.toThrow(/expected a size/);
    process.env.RENDERBRIDGE_BLOB_CACHE_SIZE = 'big';
    await expect(parse([])).rejects.toThrow(/RENDERBRIDGE_BLOB_CACHE_SIZE/);
  });
});
