// A blob project is held to the zip's rules exactly: each hostile file list is refused with the
// code the same names get as zip entries (both go through zip/rules.ts), before any blob is
// downloaded, with nothing left in the job folder or the cache. Real filesystem storage.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assembleBlobProject } from '../../service/worker/project/assemble-blobs.js';
import { BlobCache } from '../../service/worker/project/blob-cache.js';
import { asTaskOutcome, FatalTaskError, RetryableTaskError } from '../../service/worker/runtime/outcomes.js';
import { DiskSpaceError, UnpackError } from '../../zip/errors.js';
import type { UnpackLimits } from '../../zip/rules.js';
import { unpackSource } from '../../zip/unpack.js';
import {
  blobOf,
  counting,
  storeDocument,
  storeProject,
  STORAGES,
  type CountedStorage,
} from '../service/worker/blob-store.js';
import { buildZip } from './zip-writer.js';

const WS = 'ws-rules';
let s: CountedStorage;
let base: string;
let cache: BlobCache;

beforeAll(async () => {
  s = counting(await STORAGES[0]!.open());
});
afterAll(async () => {
  await s.close();
});
beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'rb-blob-rules-'));
  cache = new BlobCache({ dir: path.join(base, 'cache'), maxBytes: 1024 ** 3 });
  s.gets.length = 0;
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

type Files = { path: string; data: string }[];

async function blobRefusal(files: Files, limits: Partial<UnpackLimits> = {}): Promise<unknown> {
  const key = await storeDocument(s.storage, WS, {
    version: 1,
    entries: files.map((f) => ({ path: f.path, ...blobOf(f.data) })),
  });
  const jobDir = path.join(base, 'work', 'blob-job');
  const err = await assembleBlobProject({
    storage: s.storage,
    projectKey: key,
    workspaceId: WS,
    jobDir,
    cache,
    signal: new AbortController().signal,
    limits,
  }).then(
    () => expect.unreachable('the blob project should have been refused'),
    (e: unknown) => e,
  );
  // Refused before a blob was read or a file written.
  expect(s.blobGets()).toEqual([]);
  expect(await readdir(jobDir).catch(() => [])).toEqual([]);
  return err;
}

async function zipRefusal(files: Files, limits: Partial<UnpackLimits> = {}): Promise<unknown> {
  const source = path.join(base, 'p.zip');
  await writeFile(source, buildZip(files.map((f) => ({ name: f.path, data: f.data }))));
  return unpackSource({ source, fileType: 'zip', jobDir: path.join(base, 'work', 'zip-job'), limits }).then(
    () => expect.unreachable('the zip should have been refused'),
    (e: unknown) => e,
  );
}

const scene = { path: 'scene.blend', data: 'BLENDER' };
const nfc = 'textures/caf\u00e9.png';
const nfd = 'textures/cafe\u0301.png';

const HOSTILE: { name: string; files: Files; code: string }[] = [
  { name: 'a ".." segment', files: [scene, { path: '../../etc/cron.d/x', data: 'x' }], code: 'ZIP_PATH_TRAVERSAL' },
  {
    name: 'a ".." behind backslashes',
    files: [scene, { path: 'tex\\..\\..\\x.png', data: 'x' }],
    code: 'ZIP_PATH_TRAVERSAL',
  },
  { name: 'an absolute path', files: [scene, { path: '/etc/passwd', data: 'x' }], code: 'ZIP_ABSOLUTE_PATH' },
  { name: 'a drive letter', files: [scene, { path: 'C:/Windows/x.dll', data: 'x' }], code: 'ZIP_ABSOLUTE_PATH' },
  { name: 'a control character', files: [scene, { path: 'tex/a\u0007.png', data: 'x' }], code: 'ZIP_BAD_NAME' },
  { name: 'a name too long', files: [scene, { path: `${'a'.repeat(300)}.png`, data: 'x' }], code: 'ZIP_BAD_NAME' },
  { name: 'no name at all', files: [scene, { path: '.', data: 'x' }], code: 'ZIP_BAD_NAME' },
  {
    name: 'the same name twice',
    files: [scene, { path: 'a.png', data: '1' }, { path: 'a.png', data: '2' }],
    code: 'ZIP_DUPLICATE_NAME',
  },
  {
    name: 'names equal after Unicode normalisation',
    files: [scene, { path: nfc, data: '1' }, { path: nfd, data: '2' }],
    code: 'ZIP_DUPLICATE_NAME',
  },
  {
    name: 'names differing only in case',
    files: [scene, { path: 'textures/Wood.png', data: '1' }, { path: 'textures/wood.png', data: '2' }],
    code: 'ZIP_DUPLICATE_NAME',
  },
  {
    name: 'folders differing only in case',
    files: [scene, { path: 'Tex/a.png', data: '1' }, { path: 'tex/A.png', data: '2' }],
    code: 'ZIP_DUPLICATE_NAME',
  },
  {
    name: 'a file where a folder is',
    files: [scene, { path: 'tex', data: '1' }, { path: 'tex/a.png', data: '2' }],
    code: 'ZIP_DUPLICATE_NAME',
  },
  {
    name: 'a file named like a folder in another case',
    files: [scene, { path: 'TEX', data: '1' }, { path: 'tex/a.png', data: '2' }],
    code: 'ZIP_DUPLICATE_NAME',
  },
];

describe('a blob project with hostile entries', () => {
  it.each(HOSTILE)("refuses $name with the zip's code ($code)", async ({ files, code }) => {
    const blob = await blobRefusal(files);
    const zip = await zipRefusal(files);
    expect(blob).toBeInstanceOf(UnpackError);
    expect(zip).toBeInstanceOf(UnpackError);
    expect((blob as UnpackError).code).toBe(code);
    expect((zip as UnpackError).code).toBe(code);
    const outcome = asTaskOutcome(blob);
    expect(outcome).toBeInstanceOf(FatalTaskError);
    expect((outcome as FatalTaskError).failedReason).toMatchObject({ name: code, type: 'VALIDATION_FAILED' });
  });

  it('refuses a project over the per-job quota (--unpack-quota) before downloading anything', async () => {
    const files = [scene, { path: 'big.exr', data: 'x'.repeat(5000) }];
    const blob = (await blobRefusal(files, { maxTotalBytes: 4096 })) as UnpackError;
    const zip = (await zipRefusal(files, { maxTotalBytes: 4096 })) as UnpackError;
    expect([blob.code, zip.code]).toEqual(['ZIP_TOO_LARGE', 'ZIP_TOO_LARGE']);
    expect(blob.details).toMatchObject({ maxTotalBytes: 4096 });
  });

  it('refuses more entries than allowed', async () => {
    const files = [scene, ...Array.from({ length: 5 }, (_, i) => ({ path: `t${i}.png`, data: `${i}` }))];
    const blob = (await blobRefusal(files, { maxEntries: 4 })) as UnpackError;
    const zip = (await zipRefusal(files, { maxEntries: 4 })) as UnpackError;
    expect([blob.code, zip.code]).toEqual(['ZIP_TOO_MANY_ENTRIES', 'ZIP_TOO_MANY_ENTRIES']);
  });

  it('fails retryably, downloading nothing, when the disk would keep less than --min-free-disk', async () => {
    const files = [scene, { path: 'tex.png', data: 'pixels' }];
    await storeProject(s.storage, WS, files); // the blobs exist: only the disk stops it
    s.gets.length = 0;
    const blob = await blobRefusal(files, { minFreeBytes: Number.MAX_SAFE_INTEGER });
    expect(blob).toBeInstanceOf(DiskSpaceError);
    expect(await zipRefusal(files, { minFreeBytes: Number.MAX_SAFE_INTEGER })).toBeInstanceOf(DiskSpaceError);
    expect(asTaskOutcome(blob)).toBeInstanceOf(RetryableTaskError);
  });

  it('refuses a project document that is not one, and one too large to read', async () => {
    const notJson = await storeDocument(s.storage, WS, 'x');
    const run = (key: string) =>
      assembleBlobProject({
        storage: s.storage,
        projectKey: key,
        workspaceId: WS,
        jobDir: path.join(base, 'j'),
        cache,
        signal: new AbortController().signal,
      }).catch((e: unknown) => e);
    expect(await run(notJson)).toMatchObject({ code: 'ZIP_CORRUPT' });
    const wrongShape = await storeDocument(s.storage, WS, { version: 2, entries: [] });
    expect(await run(wrongShape)).toMatchObject({ code: 'ZIP_CORRUPT' });
    const huge = await storeDocument(s.storage, WS, { version: 1, entries: [], padding: 'x'.repeat(65 * 1024 * 1024) });
    expect(await run(huge)).toMatchObject({ code: 'ZIP_CORRUPT', details: { maxBytes: 64 * 1024 * 1024 } });
  });

  it('skips macOS resource forks as the zip does, after checking their names', async () => {
    const files = [scene, { path: '__MACOSX/._scene.blend', data: 'fork' }];
    const key = await storeProject(s.storage, WS, files);
    s.gets.length = 0;
    const r = await assembleBlobProject({
      storage: s.storage,
      projectKey: key,
      workspaceId: WS,
      jobDir: path.join(base, 'j'),
      cache,
      signal: new AbortController().signal,
    });
    expect(r.files).toEqual(['scene.blend']);
    expect(s.blobGets()).toHaveLength(1);
    const zip = path.join(base, 'p.zip');
    await writeFile(zip, buildZip(files.map((f) => ({ name: f.path, data: f.data }))));
    expect((await unpackSource({ source: zip, fileType: 'zip', jobDir: path.join(base, 'z') })).files).toEqual([
      'scene.blend',
    ]);
  });
});
