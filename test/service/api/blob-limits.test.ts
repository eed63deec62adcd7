// What the content-addressed upload extension refuses (commits the worker would refuse, bodies
// past the limit, expired commits) and what it looks like turned off: the spec's flow only.
import { describe, expect, it } from 'vitest';
import { DEFAULT_UNPACK_LIMITS } from '../../../zip/rules.js';
import { ExtensionList } from '../../../shared/extensions.js';
import { createJob, putBytes } from '../../helpers/flow.js';
import { commit, noise, queryBlobs, ref, sendMissing, sha256 } from '../../helpers/blob-flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { startTestService, useTestService } from '../../helpers/service.js';

const QUOTA = 1024 * 1024;
const EMPTY = ref(Buffer.alloc(0));

const used = useTestService({ unpackQuotaBytes: QUOTA, rateLimitMax: 1_000_000 });
const { call } = used;

const commitEntries = (entries: { path: string; sha256: string; size: number }[]) =>
  call('POST', '/uploads/commit', { fileName: 'p.zip', entries });

describe('commits the worker would refuse', () => {
  it('refuses two entries on one path (also up to case or Unicode form), a file where a folder is', async () => {
    const cases: [string, string][] = [
      ['Textures/Wood.png', 'textures/wood.png'],
      ['caf\u00e9.png', 'cafe\u0301.png'],
      ['maps/a', 'maps/a/b.png'],
      ['same.png', 'same.png'],
    ];
    for (const [a, b] of cases) {
      const r = await commitEntries([
        { path: a, ...EMPTY },
        { path: b, ...EMPTY },
      ]);
      expect([r.status, errorBody(r).name], `${a} / ${b}`).toEqual([400, 'VALIDATION_ERROR']);
      expect(errorBody(r).details[0]).toMatchObject({
        code: 'ZIP_DUPLICATE_NAME',
        path: ['body', 'entries', '1', 'path'],
      });
    }
    for (const bad of ['../escape.png', '/abs.png', 'C:/win.png', 'a//b.png', 'back\\slash.png']) {
      const r = await commitEntries([{ path: bad, ...EMPTY }]);
      expect([r.status, errorBody(r).name], bad).toEqual([400, 'VALIDATION_ERROR']);
    }
    const wrongEmpty = await commitEntries([{ path: 'empty.txt', sha256: sha256(Buffer.from('x')), size: 0 }]);
    expect(errorBody(wrongEmpty).details[0]).toMatchObject({
      code: 'empty_blob_sha256',
      path: ['body', 'entries', '0', 'sha256'],
    });
  });

  it('refuses a project over the per-job quota (413) or with more files than the worker takes (400)', async () => {
    const big = await commitEntries([
      { path: 'a.bin', sha256: sha256(Buffer.from('a')), size: QUOTA },
      { path: 'b.bin', sha256: sha256(Buffer.from('b')), size: 1 },
    ]);
    expect([big.status, errorBody(big).name]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    expect(errorBody(big).metadata).toMatchObject({ maxBytes: QUOTA, bytes: QUOTA + 1 });
    // More files than the worker takes (its limit is the most one request may list) are refused before anything else.
    const many = await commitEntries(
      Array.from({ length: DEFAULT_UNPACK_LIMITS.maxEntries + 1 }, (_, i) => ({ path: `f/${i}.txt`, ...EMPTY })),
    );
    expect([many.status, errorBody(many).name]).toEqual([400, 'VALIDATION_ERROR']);
    // A blob no project of this service could hold is not even asked for.
    const q = await call('POST', '/uploads/blobs/query', {
      blobs: [{ sha256: sha256(Buffer.from('x')), size: QUOTA + 1 }],
    });
    expect([q.status, errorBody(q).name]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
  });

  it('names the missing blobs (up to 100, with the count), and commits once they are sent', async () => {
    const files = Array.from({ length: 150 }, (_, i) => ({ path: `t/${i}.png`, bytes: noise(`m${i}`, 100) }));
    const refused = await commit(call, files);
    expect(refused.status).toBe(409);
    const body = errorBody(refused);
    expect(body.name).toBe('BLOBS_MISSING');
    expect(body.metadata.missingCount).toBe(150);
    expect(body.metadata.missing).toEqual(files.slice(0, 100).map((f) => ref(f.bytes)));
    const q = await queryBlobs(
      call,
      files.map((f) => f.bytes),
    );
    await sendMissing(q.missing, new Map(files.map((f) => [sha256(f.bytes), f.bytes])), 8);
    expect((await commit(call, files)).status).toBe(201);
  });
});

describe('request bodies', () => {
  it('takes a query naming 200,000 blobs, and answers a body past the raised limit with 413, not 500', async () => {
    const blobs = Array.from({ length: 200_000 }, (_, i) =>
      i % 1000 === 0 ? { sha256: sha256(Buffer.from(`q${i}`)), size: 10 } : EMPTY,
    );
    const r = await call('POST', '/uploads/blobs/query', { blobs });
    expect(r.status).toBe(200);
    expect((r.body as { missing: unknown[] }).missing).toHaveLength(200);
    const huge = `{"blobs":[${'"x",'.repeat(16 * 1024 * 1024)}"x"]}`;
    for (const path of ['/uploads/blobs/query', '/uploads/commit']) {
      const big = await call('POST', path, undefined, { headers: { 'content-type': 'application/json' }, raw: huge });
      expect([big.status, errorBody(big).name], path).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    }
    // Only those two routes: the others keep the service's body limit (1 MiB).
    const other = await call('POST', '/uploads', { fileName: 'a'.repeat(2 * 1024 * 1024), fileType: 'blend' });
    expect(other.status).toBe(413);
  }, 60_000);
});

describe('expiry', () => {
  it('refuses a job from a commit that expired (its blobs are no longer kept for it)', async () => {
    const short = await startTestService({ uploadUrlTtlSeconds: 0 });
    try {
      const c = api(short.baseUrl, short.apiKey);
      const r = await c('POST', '/uploads/commit', { fileName: 'p.zip', entries: [{ path: 'empty.txt', ...EMPTY }] });
      expect(r.status).toBe(201);
      const slug = (r.body as { slug: string }).slug;
      const job = await c('POST', '/jobs', { slug });
      expect([job.status, errorBody(job).name, errorBody(job).metadata.uploadUrlExpired]).toEqual([
        409,
        'UPLOAD_INCOMPLETE',
        true,
      ]);
    } finally {
      await short.close();
    }
  });
});

describe('with the extension turned off', () => {
  it("lists no extension, answers its routes with 404 ROUTE_NOT_FOUND, and the spec's flow works", async () => {
    const off = await startTestService({ blobUploads: false });
    try {
      const c = api(off.baseUrl, off.apiKey);
      const ext = await c('GET', '/extensions');
      expect(ExtensionList.parse(ext.body).data.extensions.map((e) => e.name)).not.toContain(
        'content-addressed-uploads',
      );
      const q = await c('POST', '/uploads/blobs/query', { blobs: [ref(Buffer.from('x'))] });
      expect([q.status, errorBody(q).name]).toEqual([404, 'ROUTE_NOT_FOUND']);
      const cm = await c('POST', '/uploads/commit', { fileName: 'p.zip', entries: [{ path: 'a', ...EMPTY }] });
      expect([cm.status, errorBody(cm).name]).toEqual([404, 'ROUTE_NOT_FOUND']);
      // A part URL made while it was on (same data, same secret) finds no route either.
      const put = await putBytes(
        `${off.origin}/blobs/${off.workspaceId}/${sha256(Buffer.from('x'))}-1/1?ps=8388608&exp=9999999999&sig=x`,
        Buffer.from('x'),
      );
      expect([put.status, errorBody(put).name]).toEqual([404, 'ROUTE_NOT_FOUND']);
      const job = await createJob(c);
      expect(job.status).toBe('created');
    } finally {
      await off.close();
    }
  });
});
