// End to end with real Blender: a packed project (absolute paths, a linked library, textures)
// sent as blobs through the content-addressed upload (the shared client against the real
// service), assembled by the service's real worker from its blob cache, validated and rendered
// with the packed textures in the pixels. A second job with the same textures downloads only the
// file that is new.
import { createHash } from 'node:crypto';
import { readFile, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProjectFile } from '../../../shared/client/blob-upload.js';
import { packProject } from '../../../daemon/pack/pack-project.js';
import { createTracer } from '../../../daemon/trace.js';
import { unpackSource } from '../../../zip/unpack.js';
import { fetchBytes, startE2E, tinyRender, validationOutcome, workDirOf, type E2E } from '../../helpers/e2e.js';
import { buildPackProject, cellColours, mismatches } from '../../helpers/pack-fixture.js';

let e2e: E2E;
let scratch: string;
/** The packed project's files, as the packer laid them out (manifest included). */
let files: ProjectFile[];

async function projectFile(root: string, rel: string): Promise<ProjectFile> {
  const source = path.join(root, ...rel.split('/'));
  const bytes = await readFile(source);
  return {
    path: rel,
    source,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    size: bytes.length,
    compression: rel.endsWith('.blend') ? 'gzip' : 'none',
  };
}

/** The blob cache report the worker logged when it assembled `jobId`'s project. */
function assemblyReport(jobId: string): { hits: number; misses: number; bytesFetched: number } | undefined {
  for (const chunk of e2e.svc.logs) {
    for (const line of chunk.split('\n')) {
      if (!line.includes('project assembled from blobs')) continue;
      const entry = JSON.parse(line) as {
        jobId?: string;
        blobCache?: { hits: number; misses: number; bytesFetched: number };
      };
      if (entry.jobId === jobId) return entry.blobCache;
    }
  }
  return undefined;
}

async function submitBlobs(list: readonly ProjectFile[]): Promise<string> {
  const { client } = e2e;
  expect(await client.hasExtension('content-addressed-uploads')).toBe(true);
  const { upload } = await client.uploadBlobs(list, { fileName: 'project.zip' });
  const job = await client.createJob({ slug: upload.slug });
  await client.validateJob(job.id, {});
  return job.id;
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'rb-blob-render-'));
  const fixture = await buildPackProject(path.join(scratch, 'src'));
  const traced = await createTracer({ blender: process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender' })(fixture.main);
  const zip = (
    await packProject(
      { blendFile: fixture.main, dependencies: traced.dependencies },
      { zipPath: path.join(scratch, 'project.zip') },
    )
  ).zipPath;
  // The packer's layout as files on disk: what its blob mode hashes and sends.
  const laidOut = await unpackSource({ source: zip, fileType: 'zip', jobDir: path.join(scratch, 'laid-out') });
  files = await Promise.all(laidOut.files.map((f) => projectFile(laidOut.root, f)));
  e2e = await startE2E();
}, 180_000);
afterAll(async () => {
  await e2e?.svc.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('a job made from blobs', () => {
  it('is assembled from hard links into the blob cache, validated, and rendered with its packed textures', async () => {
    const { client, svc } = e2e;
    const jobId = await submitBlobs(files);
    const job = await validationOutcome(client, jobId);
    expect(job.status, JSON.stringify(job.failedReason)).toBe('validated');
    expect(job.analysis?.config.pathToFileForRender).toBe('scenes/main.blend');
    expect(job.analysis?.output?.missingFiles).toEqual([['Image', 'missing.png', '//../textures/missing.png']]);

    const distinct = new Set(files.filter((f) => f.size > 0).map((f) => `${f.sha256}-${f.size}`));
    expect(assemblyReport(jobId)).toMatchObject({ hits: 0, misses: distinct.size });
    // The project's files are the cache's inodes (read-only), not copies.
    const wood = files.find((f) => f.path === 'textures/wood.png')!;
    const inProject = await stat(path.join(workDirOf(svc, jobId), 'project', 'textures', 'wood.png'));
    const cached = await stat(
      path.join(svc.dataDir, 'blob-cache', wood.sha256.slice(0, 2), `${wood.sha256}-${wood.size}`),
    );
    expect(inProject.ino).toBe(cached.ino);
    expect(cached.mode & 0o777).toBe(0o444);

    await client.renderJob(jobId, tinyRender('1'));
    const done = await client.waitForStatus(jobId, ['completed', 'failed'], { intervalMs: 150, timeoutMs: 120_000 });
    expect(done.failedReason ?? null).toBeNull();
    const frames = (await client.getDownloads(jobId)).frameOutputs ?? [];
    const png = path.join(scratch, 'f_0001.png');
    await writeFile(png, await fetchBytes(frames[0]!.url));
    // Red (absolute), green, orange and yellow (the library's own,
    // absolute and out-of-project) cells, magenta for the missing file.
    expect(mismatches(await cellColours(png))).toEqual({});
  }, 240_000);

  it('downloads for the next job with the same textures only the file that is new', async () => {
    const { client } = e2e;
    const notes = path.join(scratch, 'notes.txt');
    await writeFile(notes, `shot notes ${Date.now()}\n`);
    const extra = await projectFile(scratch, 'notes.txt');
    const jobId = await submitBlobs([...files, extra]);
    const job = await validationOutcome(client, jobId);
    expect(job.status, JSON.stringify(job.failedReason)).toBe('validated');
    const distinct = new Set(files.filter((f) => f.size > 0).map((f) => `${f.sha256}-${f.size}`));
    expect(assemblyReport(jobId)).toEqual({ hits: distinct.size, misses: 1, bytesFetched: extra.size });
  }, 120_000);
});
