// A project file that cannot be read at upload time is a local problem: the upload fails at once
// with LocalFileError naming the file, never a NetworkError retried five times and then blamed on
// the service (the message a daemon turned into "check the service URL"). Both ways a part is
// read: streamed from the file (compression none) and read into memory to gzip it. Against the
// real service, every request through the counting proxy.
import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../../shared/client/client.js';
import { LocalFileError, NetworkError } from '../../../shared/client/errors.js';
import { startProxiedService } from '../../helpers/proxied-service.js';
import { MiB, blobProjectPerTest } from './blob-project.js';

const t = blobProjectPerTest('rb-blob-local-');

describe('a project file that cannot be read at upload time', () => {
  it.each([
    ['streamed (compression none)', 'metal.exr'],
    ['gzip-encoded in memory', 'scene.blend'],
  ])('fails at once naming the file, not the network (%s)', async (_how, name) => {
    t.env = await startProxiedService('files', { blobPartSizeBytes: 1 * MiB });
    const client = new RenderJobClient({
      baseUrl: t.env.baseUrl,
      apiKey: t.env.svc.apiKey,
      baseDelayMs: 50,
      maxDelayMs: 200,
    });
    const file = t.project.files.find((f) => f.path.endsWith(name));
    if (!file) throw new Error(`fixture lacks ${name}`);
    await rm(file.source);
    const retries: unknown[] = [];
    // One part at a time, the file's parts first: nothing else is in flight when it fails.
    const files = [file, ...t.project.files.filter((f) => f !== file)];
    const err = await client
      .uploadBlobs(files, { fileName: 'scene.zip', concurrency: 1, onRetry: (r) => retries.push(r) })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LocalFileError);
    expect(err).not.toBeInstanceOf(NetworkError);
    expect((err as LocalFileError).file).toBe(file.source);
    expect((err as LocalFileError).code).toBe('ENOENT');
    expect((err as Error).message).toContain('moved or deleted');
    expect((err as Error).message).not.toMatch(/service URL|ECONNRESET/);
    expect(retries).toEqual([]);
  });
});
