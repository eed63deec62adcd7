// `renderbridge service`'s content-addressed upload options and their environment variables:
// parsed, shown in --help, the flag beating the environment, and bad values refused by name.
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addBlobOptions, blobConfig, type BlobOptions } from '../../cli/blob-options.js';
import { registerServiceCommand } from '../../cli/service.js';
import { defaultConfig } from '../../service/config-defaults.js';

const VARS = ['RENDERBRIDGE_BLOB_UPLOADS', 'RENDERBRIDGE_BLOB_PART_SIZE', 'RENDERBRIDGE_BLOB_RETENTION_DAYS'] as const;

beforeEach(() => {
  for (const v of VARS) delete process.env[v];
});
afterEach(() => {
  for (const v of VARS) delete process.env[v];
});

/** The ServiceConfig part a `service` command line gives, with the environment as it is now. */
async function configFrom(argv: string[]) {
  let seen: BlobOptions | undefined;
  const cmd = addBlobOptions(new Command('x').exitOverride().configureOutput({ writeErr: () => undefined })).action(
    (o: BlobOptions) => void (seen = o),
  );
  await cmd.parseAsync(argv, { from: 'user' });
  return blobConfig(seen!);
}

describe('blob upload options', () => {
  it('default to the ServiceConfig defaults: on, 8 MiB parts, 30 days', async () => {
    const d = defaultConfig();
    expect(await configFrom([])).toEqual({
      blobUploads: d.blobUploads,
      blobPartSizeBytes: d.blobPartSizeBytes,
      blobRetentionDays: d.blobRetentionDays,
    });
    expect(await configFrom([])).toEqual({
      blobUploads: true,
      blobPartSizeBytes: 8 * 1024 * 1024,
      blobRetentionDays: 30,
    });
  });

  it('take flags and environment variables; --no-blob-uploads beats RENDERBRIDGE_BLOB_UPLOADS=1', async () => {
    expect(await configFrom(['--no-blob-uploads', '--blob-part-size', '16MiB', '--blob-retention-days', '7'])).toEqual({
      blobUploads: false,
      blobPartSizeBytes: 16 * 1024 * 1024,
      blobRetentionDays: 7,
    });
    process.env.RENDERBRIDGE_BLOB_UPLOADS = '0';
    process.env.RENDERBRIDGE_BLOB_PART_SIZE = '1MiB';
    process.env.RENDERBRIDGE_BLOB_RETENTION_DAYS = '2.5';
    expect(await configFrom([])).toEqual({
      blobUploads: false,
      blobPartSizeBytes: 1024 * 1024,
      blobRetentionDays: 2.5,
    });
    for (const on of ['1', 'true', 'yes', 'on', 'ON']) {
      process.env.RENDERBRIDGE_BLOB_UPLOADS = on;
      expect((await configFrom([])).blobUploads, on).toBe(true);
      expect((await configFrom(['--no-blob-uploads'])).blobUploads, on).toBe(false);
    }
  });

  it('refuses values that are not a setting, naming the flag or variable', async () => {
    await expect(configFrom(['--blob-part-size', '1KiB'])).rejects.toThrow(/64KiB to 1GiB/);
    await expect(configFrom(['--blob-part-size', '2GiB'])).rejects.toThrow(/64KiB to 1GiB/);
    await expect(configFrom(['--blob-retention-days', '0'])).rejects.toThrow(/days above 0/);
    process.env.RENDERBRIDGE_BLOB_UPLOADS = 'maybe';
    await expect(configFrom([])).rejects.toThrow(/RENDERBRIDGE_BLOB_UPLOADS must be 1 or 0/);
  });

  it('are listed in renderbridge service --help with their defaults and variables', () => {
    const program = new Command('renderbridge');
    registerServiceCommand(program);
    const help = program.commands
      .find((c) => c.name() === 'service')!
      .helpInformation()
      .replace(/\s+/g, ' ');
    expect(help).toContain('--no-blob-uploads');
    expect(help).toContain('RENDERBRIDGE_BLOB_UPLOADS=0');
    expect(help).toContain('default: 8MiB, env: RENDERBRIDGE_BLOB_PART_SIZE');
    expect(help).toContain('default: 30, env: RENDERBRIDGE_BLOB_RETENTION_DAYS');
  });
});
