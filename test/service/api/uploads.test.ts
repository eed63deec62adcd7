import { execFile } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { Job } from '../../../shared/api/job.js';
import { UploadTarget } from '../../../shared/api/upload.js';
import { putBytes, newUpload } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { filesOnly, objectUrlPrefix, scaleOnly, startTestService, useTestService } from '../../helpers/service.js';

const run = promisify(execFile);
const MAX = 64 * 1024;

const used = useTestService({ maxUploadBytes: MAX });
const { call } = used;

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.join(e.parentPath, e.name));
  }
  return out;
}

describe('POST /uploads', () => {
  it('returns a presigned target with slug and expiry for a .blend and a .zip', async () => {
    for (const [fileName, fileType] of [
      ['scene.blend', 'blend'],
      ['project.zip', 'zip'],
    ]) {
      const r = await call('POST', '/uploads', { fileName, fileType });
      expect(r.status).toBe(201);
      const t = UploadTarget.parse(r.body);
      expect(t.uploadUrl.startsWith(objectUrlPrefix(used.svc))).toBe(true);
      expect(Date.parse(t.expiresAt)).toBeGreaterThan(Date.now());
    }
  });

  it.each([
    ['missing fileType', { fileName: 'a.blend' }, 'fileType'],
    ['missing fileName', { fileType: 'zip' }, 'fileName'],
    ['empty fileName', { fileName: '', fileType: 'zip' }, 'fileName'],
    ['wrong-case enum', { fileName: 'a.zip', fileType: 'ZIP' }, 'fileType'],
    ['unsupported type', { fileName: 'a.mp4', fileType: 'mp4' }, 'fileType'],
    ['ill-typed name', { fileName: 42, fileType: 'zip' }, 'fileName'],
    ['extension mismatch', { fileName: 'a.blend', fileType: 'zip' }, 'fileName'],
    ['folder in name', { fileName: '../../etc/passwd.zip', fileType: 'zip' }, 'fileName'],
    ['unknown field', { fileName: 'a.zip', fileType: 'zip', bucket: 'other' }, ''],
  ])('refuses %s with 400 and a zod error body', async (_name, body, field) => {
    const r = await call('POST', '/uploads', body);
    expect(r.status).toBe(400);
    const e = errorBody(r);
    expect(e.name).toBe('VALIDATION_ERROR');
    expect(e.type).toBe('zod');
    expect(e.details.length).toBeGreaterThan(0);
    expect(e.details[0]!.path[0]).toBe('body');
    if (field) expect(e.details.some((d) => d.path.includes(field))).toBe(true);
  });
});

describe('PUT to the uploadUrl', () => {
  it('accepts one upload made with curl -T, and the job records its size', async () => {
    const t = await newUpload(call, 'project.zip');
    const file = path.join(used.svc.dataDir, 'curl-upload.zip');
    const bytes = Buffer.alloc(20_000, 7);
    await writeFile(file, bytes);
    const { stdout } = await run('curl', [
      '-sS',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '-T',
      file,
      '-H',
      'Content-Type: application/zip',
      t.uploadUrl,
    ]);
    expect(stdout).toBe('200');
    const job = await call('POST', '/jobs', { slug: t.slug });
    expect(job.status).toBe(201);
    expect(Job.parse(job.body).sceneFile?.size).toBe(String(bytes.length));
  });

  it.skipIf(filesOnly('one PUT per upload URL'))('accepts exactly one PUT per upload URL', async () => {
    const t = await newUpload(call);
    expect((await putBytes(t.uploadUrl, Buffer.from('one'))).status).toBe(200);
    const again = await putBytes(t.uploadUrl, Buffer.from('two'));
    expect(again.status).toBe(409);
    expect(errorBody(again).name).toBe('UPLOAD_ALREADY_COMPLETED');
  });

  it.skipIf(filesOnly('checking upload URL signatures'))(
    'refuses a tampered signature, key or expiry with 403 SIGNATURE_INVALID',
    async () => {
      const t = await newUpload(call);
      const u = new URL(t.uploadUrl);
      const variants = [
        (() => {
          const x = new URL(u);
          const sig = x.searchParams.get('sig')!;
          x.searchParams.set('sig', `${sig.startsWith('A') ? 'B' : 'A'}${sig.slice(1)}`);
          return x;
        })(),
        (() => {
          const x = new URL(u);
          x.searchParams.set('exp', String(Number(x.searchParams.get('exp')) + 3600));
          return x;
        })(),
        (() => {
          const x = new URL(u);
          x.pathname = x.pathname.replace(/scene\.blend$/, 'other.blend');
          return x;
        })(),
        (() => {
          const x = new URL(u);
          x.searchParams.set('ft', 'zip');
          return x;
        })(),
        (() => {
          const x = new URL(u);
          x.searchParams.delete('sig');
          return x;
        })(),
      ];
      for (const v of variants) {
        const r = await putBytes(v.toString(), Buffer.from('x'));
        expect(r.status).toBe(403);
        expect(errorBody(r).name).toBe('SIGNATURE_INVALID');
      }
    },
  );

  it.skipIf(filesOnly('refusing GET on an upload URL'))('never lets an upload URL be used for GET', async () => {
    const t = await newUpload(call);
    await putBytes(t.uploadUrl, Buffer.from('secret scene'));
    const r = await fetch(t.uploadUrl);
    expect(r.status).toBe(403);
    expect(errorBody({ status: r.status, headers: r.headers, body: await r.json() }).name).toBe('SIGNATURE_INVALID');
  });

  it.skipIf(filesOnly('checking the upload Content-Type'))(
    'refuses a Content-Type that does not match the file type with 415',
    async () => {
      const t = await newUpload(call, 'project.zip');
      const r = await putBytes(t.uploadUrl, Buffer.from('PK'), 'text/plain');
      expect(r.status).toBe(415);
      expect(errorBody(r).name).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(errorBody(r).message).toContain('application/zip');
    },
  );

  it.skipIf(filesOnly('refusing an oversize PUT'))(
    'refuses a declared oversize upload with 413 before reading it',
    async () => {
      const t = await newUpload(call);
      const r = await putBytes(t.uploadUrl, Buffer.alloc(MAX + 1));
      expect(r.status).toBe(413);
      expect(errorBody(r).name).toBe('PAYLOAD_TOO_LARGE');
    },
  );

  it.skipIf(filesOnly('stopping an oversize PUT'))(
    'stops a chunked upload at the limit, removes the partial file, and the slug stays unusable',
    async () => {
      const t = await newUpload(call);
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < 8; i++) c.enqueue(new Uint8Array(16 * 1024));
          c.close();
        },
      });
      const r = await fetch(t.uploadUrl, {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream' },
        body,
        duplex: 'half',
      } as RequestInit).catch((e: unknown) => e);
      if (r instanceof Response) {
        expect(r.status).toBe(413);
        expect(errorBody({ status: r.status, headers: r.headers, body: await r.json() }).name).toBe(
          'PAYLOAD_TOO_LARGE',
        );
      }
      // Whether or not the client read the answer, nothing partial may remain or count as uploaded.
      const leftovers = (await filesUnder(path.join(used.svc.dataDir, 'objects'))).filter(
        (f) => f.includes(t.slug) || f.includes('.tmp'),
      );
      expect(leftovers).toEqual([]);
      const job = await call('POST', '/jobs', { slug: t.slug });
      expect(job.status).toBe(409);
      expect(errorBody(job).name).toBe('UPLOAD_INCOMPLETE');
    },
  );

  it.skipIf(filesOnly('dropping an interrupted PUT'))('treats an interrupted upload as never uploaded', async () => {
    const t = await newUpload(call);
    const u = new URL(t.uploadUrl);
    const sent = 10_000;
    await new Promise<void>((resolve, reject) => {
      const sock = connect(Number(u.port), u.hostname, () => {
        sock.write(
          `PUT ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: ` +
            `application/octet-stream\r\nContent-Length: 50000\r\n\r\n`,
        );
        // Closing once the bytes are handed over ends the body short of its Content-Length.
        sock.write(Buffer.alloc(sent, 1), () => {
          sock.destroy();
          resolve();
        });
      });
      sock.on('error', reject);
    });
    // The service took the broken PUT in (it keeps what came, to be resumed): judged from then on.
    await vi.waitFor(
      async () => {
        const state = await call('GET', `/uploads/${t.slug}`);
        expect(state.body).toMatchObject({ data: { completed: false, totalBytes: 50_000 } });
      },
      { timeout: 20_000, interval: 50 },
    );
    const job = await call('POST', '/jobs', { slug: t.slug });
    expect(job.status).toBe(409);
    expect(errorBody(job).name).toBe('UPLOAD_INCOMPLETE');
    const leftovers = (await filesUnder(path.join(used.svc.dataDir, 'objects'))).filter(
      (f) => f.includes(t.slug) || f.includes('.tmp'),
    );
    expect(leftovers).toEqual([]);
    // The same URL still accepts the whole file afterwards.
    expect((await putBytes(t.uploadUrl, Buffer.alloc(50_000, 1))).status).toBe(200);
    expect((await call('POST', '/jobs', { slug: t.slug })).status).toBe(201);
  });
});

describe('uploads straight to S3', () => {
  it.skipIf(scaleOnly('the size check of an upload the service never saw (S3)'))(
    'refuses a job whose S3 object is over the limit with 413 and deletes the object',
    async () => {
      const t = await newUpload(call);
      expect((await putBytes(t.uploadUrl, Buffer.alloc(MAX + 1, 7))).status).toBe(200);
      const refused = await call('POST', '/jobs', { slug: t.slug });
      expect(refused.status).toBe(413);
      expect(errorBody(refused).name).toBe('PAYLOAD_TOO_LARGE');
      expect((await call('POST', '/jobs', { slug: t.slug })).status).toBe(409);
      // A file within the limit may still be sent to the same URL while it lasts.
      expect((await putBytes(t.uploadUrl, Buffer.alloc(1000, 7))).status).toBe(200);
      const created = await call('POST', '/jobs', { slug: t.slug });
      expect(created.status).toBe(201);
    },
  );
});

describe('expiry', () => {
  it.skipIf(filesOnly('the URL_EXPIRED error body'))(
    'refuses an upload URL after expiresAt with 403 URL_EXPIRED',
    async () => {
      // The service's clock moves past the URL's expiry: no real second is waited out.
      let ahead = 0;
      const short = await startTestService({ clock: () => Date.now() + ahead });
      try {
        const t = await newUpload(api(short.baseUrl, short.apiKey));
        ahead = (short.config.uploadUrlTtlSeconds + 1) * 1000;
        const r = await putBytes(t.uploadUrl, Buffer.from('late'));
        expect(r.status).toBe(403);
        expect(errorBody(r).name).toBe('URL_EXPIRED');
        const job = await api(short.baseUrl, short.apiKey)('POST', '/jobs', { slug: t.slug });
        expect(job.status).toBe(409);
        expect(errorBody(job).metadata.uploadUrlExpired).toBe(true);
      } finally {
        await short.close();
      }
    },
  );
});
