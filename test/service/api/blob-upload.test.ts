// The content-addressed upload extension against the real service (SQLite + files, or with the
// scale stack PostgreSQL + Redis + s3rver): only missing blobs are sent, in parts that can be
// resumed, every blob is verified before it is stored, and blobs never cross workspaces.
import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { CommittedUpload } from '../../../shared/api/blob-upload.js';
import { Job } from '../../../shared/api/job.js';
import { ExtensionList } from '../../../shared/extensions.js';
import { BlobPartUrls } from '../../../service/blobs/part-urls.js';
import { blobKey, BlobProject } from '../../../service/domain/blob-project.js';
import {
  commit,
  noise,
  putPart,
  queryBlobs,
  ref,
  sendMissing,
  sha256,
  uploadProject,
  type TestFile,
} from '../../helpers/blob-flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { useTestService } from '../../helpers/service.js';

const PART = 64 * 1024;

const used = useTestService({ blobPartSizeBytes: PART, rateLimitMax: 1_000_000 });
const { call } = used;

const stored = (ws: string, bytes: Buffer) => used.svc.service.ports.storage.stat(blobKey(ws, ref(bytes)));
const part = (bytes: Buffer, n: number) => bytes.subarray((n - 1) * PART, n * PART);

describe('content-addressed uploads', () => {
  it('advertises the extension and the routes it adds', async () => {
    const r = await call('GET', '/extensions');
    expect(r.status).toBe(200);
    const { extensions } = ExtensionList.parse(r.body).data;
    // Other extensions (the dashboard's) are listed beside it.
    expect(extensions.filter((e) => e.name === 'content-addressed-uploads')).toEqual([
      expect.objectContaining({ version: 1, routes: ['queryBlobs', 'commitUpload'] }),
    ]);
  });

  it('sends only the blobs the workspace lacks, and the commit is an ordinary upload for POST /jobs', async () => {
    const texture = noise('texture', 5000);
    const files: TestFile[] = [
      { path: 'scene.blend', bytes: noise('scene', 200_000) },
      { path: 'textures/wood.png', bytes: texture },
      { path: 'textures/wood copy.png', bytes: texture },
      { path: 'notes/empty.txt', bytes: Buffer.alloc(0) },
      { path: 'cache/baked.txt', bytes: Buffer.from('frame data '.repeat(3000)) },
    ];
    const q = await queryBlobs(
      call,
      files.map((f) => f.bytes),
    );
    // Three distinct non-empty blobs to send; the empty file is never missing.
    expect(q.partSize).toBe(PART);
    expect(q.held).toEqual({ count: 1, bytes: 0 });
    expect(q.missing.map((m) => m.sha256)).toEqual([sha256(files[0]!.bytes), sha256(texture), sha256(files[4]!.bytes)]);
    expect(q.missing[0]!.parts.map((p) => [p.partNumber, p.offset, p.length, p.uploaded])).toEqual([
      [1, 0, PART, false],
      [2, PART, PART, false],
      [3, 2 * PART, PART, false],
      [4, 3 * PART, 200_000 - 3 * PART, false],
    ]);
    // The scene's parts four at a time; the text gzip-encoded.
    const byHash = new Map(files.map((f) => [sha256(f.bytes), f.bytes]));
    const answers = await sendMissing(q.missing.slice(0, 2), byHash, 4);
    expect(
      answers.filter((a) => a.body.sha256 === sha256(files[0]!.bytes) && a.body.blobComplete).length,
    ).toBeGreaterThanOrEqual(1);
    const text = q.missing[2]!;
    const gz = await putPart(text.parts[0]!.uploadUrl, files[4]!.bytes, { gzip: true });
    expect([gz.status, gz.body.blobComplete]).toEqual([200, true]);

    const again = await queryBlobs(
      call,
      files.map((f) => f.bytes),
    );
    expect(again.missing).toEqual([]);
    expect(again.held).toEqual({ count: 4, bytes: 200_000 + 5000 + files[4]!.bytes.length });
    for (const f of files.filter((x) => x.bytes.length > 0)) {
      const got = await buffer(await used.svc.service.ports.storage.get(blobKey(used.svc.workspaceId, ref(f.bytes))));
      expect(got.equals(f.bytes), f.path).toBe(true);
    }

    const c = await commit(call, files);
    expect(c.status).toBe(201);
    const committed = CommittedUpload.parse(c.body);
    const total = files.reduce((s, f) => s + f.bytes.length, 0);
    expect(committed).toMatchObject({ fileName: 'project.zip', size: total, fileCount: 5 });
    const created = await call('POST', '/jobs', { slug: committed.slug });
    expect(created.status).toBe(201);
    const job = Job.parse(created.body);
    expect(job.sceneFile).toMatchObject({ name: 'project.zip', size: String(total), isSceneFile: false });
    // What the worker gets: a blob project document in place of a zip.
    const rec = (await used.svc.service.ports.jobs.getById(job.id))!;
    expect(rec.internal).toMatchObject({ fileType: 'zip', sourceFormat: 'blobs' });
    const doc = BlobProject.parse(
      JSON.parse((await buffer(await used.svc.service.ports.storage.get(rec.internal.sourceKey))).toString()),
    );
    expect(doc.entries).toEqual(files.map((f) => ({ path: f.path, ...ref(f.bytes) })));
    // The slug made its one job, as any upload's does.
    expect(errorBody(await call('POST', '/jobs', { slug: committed.slug })).name).toBe('UPLOAD_ALREADY_USED');
    // The part requests are logged, their signatures are not.
    const logs = used.svc.logs.join('');
    expect(logs).toContain(`/blobs/${used.svc.workspaceId}/${sha256(files[0]!.bytes)}-200000/4`);
    for (const p of q.missing.flatMap((m) => m.parts))
      expect(logs).not.toContain(new URL(p.uploadUrl).searchParams.get('sig')!);
  });

  it('resumes a partial upload: parts already stored are reported and only the rest are sent', async () => {
    const bytes = noise('resumed', 300_000);
    const first = (await queryBlobs(call, [bytes])).missing[0]!;
    expect(first.parts).toHaveLength(5);
    for (const n of [1, 3]) {
      const a = await putPart(first.parts[n - 1]!.uploadUrl, part(bytes, n));
      expect([a.status, a.body.blobComplete]).toEqual([200, false]);
    }
    // A client that lost its state (a restart) asks again.
    const resumed = (await queryBlobs(call, [bytes])).missing[0]!;
    expect(resumed.parts.map((p) => p.uploaded)).toEqual([true, false, true, false, false]);
    const answers = await sendMissing([resumed], new Map([[sha256(bytes), bytes]]));
    expect(answers).toHaveLength(3);
    expect((await queryBlobs(call, [bytes])).missing).toEqual([]);
    expect(await stored(used.svc.workspaceId, bytes)).toEqual({ size: bytes.length });
  });

  it('refuses a blob whose bytes do not hash to its sha256 and stores nothing of it', async () => {
    const small = noise('small', 1000);
    const url = (await queryBlobs(call, [small])).missing[0]!.parts[0]!.uploadUrl;
    const wrong = await putPart(url, noise('other', 1000));
    expect(wrong.status).toBe(422);
    expect(errorBody(wrong)).toMatchObject({
      name: 'BLOB_HASH_MISMATCH',
      metadata: { sha256: sha256(small), size: 1000 },
    });
    expect(await stored(used.svc.workspaceId, small)).toBeUndefined();
    expect((await queryBlobs(call, [small])).missing).toHaveLength(1);

    // In parts: a wrong part is found when the last part arrives; every part goes, nothing is stored.
    const big = noise('big', 4 * PART);
    const parts = (await queryBlobs(call, [big])).missing[0]!.parts;
    for (const n of [1, 2, 3])
      expect((await putPart(parts[n - 1]!.uploadUrl, n === 2 ? noise('bad', PART) : part(big, n))).status).toBe(200);
    const last = await putPart(parts[3]!.uploadUrl, part(big, 4));
    expect(errorBody(last).name).toBe('BLOB_HASH_MISMATCH');
    expect(await stored(used.svc.workspaceId, big)).toBeUndefined();
    expect((await queryBlobs(call, [big])).missing[0]!.parts.map((p) => p.uploaded)).toEqual([
      false,
      false,
      false,
      false,
    ]);

    // A retried part replaces the one sent before.
    for (const n of [1, 2]) await putPart(parts[n - 1]!.uploadUrl, n === 2 ? noise('bad', PART) : part(big, n));
    expect((await putPart(parts[1]!.uploadUrl, part(big, 2))).status).toBe(200);
    await putPart(parts[2]!.uploadUrl, part(big, 3));
    const done = await putPart(parts[3]!.uploadUrl, part(big, 4));
    expect([done.status, done.body.blobComplete]).toEqual([200, true]);
    expect(
      (await buffer(await used.svc.service.ports.storage.get(blobKey(used.svc.workspaceId, ref(big))))).equals(big),
    ).toBe(true);
  });

  it('refuses parts of the wrong length, encoding or type with the error body', async () => {
    const bytes = noise('strict', 2 * PART);
    const [p1, p2] = (await queryBlobs(call, [bytes])).missing[0]!.parts;
    const short = await putPart(p1!.uploadUrl, part(bytes, 1).subarray(1));
    expect([short.status, errorBody(short).name]).toEqual([400, 'BLOB_PART_SIZE_MISMATCH']);
    // gzip-encoded, one byte too many once decoded.
    const long = await putPart(p1!.uploadUrl, Buffer.concat([part(bytes, 1), Buffer.from('x')]), { gzip: true });
    expect([long.status, errorBody(long).name]).toEqual([400, 'BLOB_PART_SIZE_MISMATCH']);
    const notGzip = await putPart(p1!.uploadUrl, part(bytes, 1), { headers: { 'content-encoding': 'gzip' } });
    expect([notGzip.status, errorBody(notGzip).name]).toEqual([400, 'BLOB_PART_SIZE_MISMATCH']);
    const brotli = await putPart(p1!.uploadUrl, part(bytes, 1), { headers: { 'content-encoding': 'br' } });
    expect([brotli.status, errorBody(brotli).name]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    const text = await putPart(p1!.uploadUrl, part(bytes, 1), { headers: { 'content-type': 'text/plain' } });
    expect([text.status, errorBody(text).name]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    expect((await queryBlobs(call, [bytes])).missing[0]!.parts.map((p) => p.uploaded)).toEqual([false, false]);
    // The connection answers the next request: refusals never leave it half read.
    expect((await putPart(p1!.uploadUrl, part(bytes, 1), { gzip: true })).status).toBe(200);
    expect((await putPart(p2!.uploadUrl, part(bytes, 2))).body.blobComplete).toBe(true);
  });

  it('refuses tampered and expired part URLs', async () => {
    const bytes = noise('signed', 3 * PART);
    const q = await queryBlobs(call, [bytes]);
    const good = new URL(q.missing[0]!.parts[1]!.uploadUrl);
    const other = noise('unsigned', 3 * PART);
    const edits: ((u: URL) => void)[] = [
      (u) => (u.pathname = u.pathname.replace(/\/2$/, '/3')),
      (u) => u.searchParams.set('ps', String(PART * 2)),
      (u) => u.searchParams.set('exp', String(Number(u.searchParams.get('exp')) + 3600)),
      (u) => u.searchParams.set('sig', `${u.searchParams.get('sig')!.slice(0, -2)}AA`),
      (u) => u.searchParams.delete('sig'),
      (u) => (u.pathname = u.pathname.replace(sha256(bytes), sha256(other))),
      (u) => (u.pathname = u.pathname.replace(used.svc.workspaceId, '00000000-0000-4000-8000-000000000000')),
      (u) => (u.pathname = u.pathname.replace(`-${3 * PART}/`, `-${3 * PART + 1}/`)),
    ];
    for (const edit of edits) {
      const u = new URL(good);
      edit(u);
      const r = await putPart(u.href, part(bytes, 2));
      expect([r.status, errorBody(r).name], u.href).toEqual([403, 'SIGNATURE_INVALID']);
    }
    const urls = new BlobPartUrls(used.svc.service.ports.blobs!.signer, () => used.svc.origin);
    const expired = urls.url(
      { workspaceId: used.svc.workspaceId, blob: ref(bytes), partNumber: 2, partSize: PART },
      new Date(Date.now() - 1000),
    );
    const late = await putPart(expired, part(bytes, 2));
    expect([late.status, errorBody(late).name]).toEqual([403, 'URL_EXPIRED']);
    expect((await queryBlobs(call, [bytes])).missing[0]!.parts.every((p) => !p.uploaded)).toBe(true);
  });

  it("keeps blobs per workspace: another with the same file neither sees nor uses the first one's", async () => {
    const shared = noise('shared texture', 3000);
    const files = [{ path: 'tex.png', bytes: shared }];
    await uploadProject(call, files);
    const rivalKey = await used.svc.createApiKey('rival studio');
    const rival = api(used.svc.baseUrl, rivalKey);
    // The rival is asked for the file as if nobody had it, and cannot commit without sending it.
    const q = await queryBlobs(rival, [shared]);
    expect(q.held).toEqual({ count: 0, bytes: 0 });
    expect(q.missing.map((m) => m.sha256)).toEqual([sha256(shared)]);
    const refused = await commit(rival, files);
    expect(refused.status).toBe(409);
    expect(errorBody(refused)).toMatchObject({
      name: 'BLOBS_MISSING',
      metadata: { missing: [ref(shared)], missingCount: 1 },
    });
    // Its part URL names its own workspace: pointed at the first workspace, the signature fails.
    const rivalUrl = new URL(q.missing[0]!.parts[0]!.uploadUrl);
    const rivalWs = rivalUrl.pathname.split('/')[2]!;
    expect(rivalWs).not.toBe(used.svc.workspaceId);
    rivalUrl.pathname = rivalUrl.pathname.replace(rivalWs, used.svc.workspaceId);
    expect((await putPart(rivalUrl.href, shared)).status).toBe(403);
    // Sent, it is the rival's own copy.
    expect((await putPart(q.missing[0]!.parts[0]!.uploadUrl, shared)).body.blobComplete).toBe(true);
    expect(await stored(rivalWs, shared)).toEqual({ size: shared.length });
    expect((await commit(rival, files)).status).toBe(201);
    expect((await queryBlobs(call, [shared])).held.count).toBe(1);
  });
});
