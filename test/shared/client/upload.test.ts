// Streaming uploads to a real HTTP server: exact bytes, progress, headers and error answers.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../../shared/client/errors.js';
import { RenderJobClient } from '../../../shared/client/client.js';
import { contentTypeFor, fileTypeFor, uploadFile } from '../../../shared/client/upload.js';
import { API_PREFIX } from '../../../shared/constants.js';
import { errorBody, sendJson, startServer, type TestServer } from './fixture.js';

const SIZE = 5 * 1024 * 1024 + 123; // a few MiB, not a multiple of any chunk size
let dir: string;
let blendPath: string;
let expectedSha: string;
let server: TestServer | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rb-client-upload-'));
  const bytes = randomBytes(SIZE);
  expectedSha = createHash('sha256').update(bytes).digest('hex');
  blendPath = join(dir, 'scene.blend');
  await writeFile(blendPath, bytes);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const sha256 = (s: Buffer) => createHash('sha256').update(s).digest('hex');

describe('uploadFile', () => {
  it('streams the exact bytes with Content-Length, no Authorization, and progress up to the size', async () => {
    let receivedSha = '';
    server = await startServer((_req, res, body) => {
      receivedSha = sha256(body);
      res.writeHead(200);
      res.end();
    });
    const progress: number[] = [];
    const result = await uploadFile(`${server.origin}/bucket/key?X-Signature=abc`, blendPath, {
      onProgress: (sent, total) => {
        expect(total).toBe(SIZE);
        progress.push(sent);
      },
    });

    expect(result).toEqual({ status: 200, bytes: SIZE });
    expect(receivedSha).toBe(expectedSha);
    const seen = server.requests[0];
    expect(seen?.method).toBe('PUT');
    expect(seen?.url).toBe('/bucket/key?X-Signature=abc');
    expect(seen?.headers['content-length']).toBe(String(SIZE));
    expect(seen?.headers['content-type']).toBe('application/octet-stream');
    expect(seen?.headers['authorization']).toBeUndefined();
    // Streamed in many chunks (not one buffer), increasing, ending at the file size.
    expect(progress.length).toBeGreaterThan(10);
    expect(progress.every((v, i) => i === 0 || v > (progress[i - 1] ?? 0))).toBe(true);
    expect(progress.at(-1)).toBe(SIZE);
  });

  it('throws ApiError with the parsed body when storage refuses', async () => {
    const body = errorBody('URL_EXPIRED', 'The signed URL has expired.');
    server = await startServer((_req, res) => sendJson(res, 403, body));
    const err = (await uploadFile(`${server.origin}/bucket/key?sig=secret`, blendPath).catch(
      (e: unknown) => e,
    )) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(403);
    expect(err.body).toEqual(body);
    expect(err.errorName).toBe('URL_EXPIRED');
    // The signature stays out of messages that may be logged.
    expect(err.message).not.toContain('secret');
  });

  it('synthesizes the body of a non-JSON refusal', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/xml' });
      res.end('<Error><Code>BadDigest</Code></Error>');
    });
    const err = (await uploadFile(`${server.origin}/k`, blendPath).catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(400);
    expect(err.errorName).toBe('HTTP_400');
    expect(err.body.metadata['rawBody']).toBe('<Error><Code>BadDigest</Code></Error>');
  });

  it('rejects with the abort reason when the signal aborts mid-upload', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200);
      res.end();
    });
    const controller = new AbortController();
    const reason = new Error('stop');
    const upload = uploadFile(`${server.origin}/k`, blendPath, {
      signal: controller.signal,
      onProgress: (sent) => {
        if (sent > 1024 * 1024) controller.abort(reason);
      },
    });
    await expect(upload).rejects.toBe(reason);
  });
});

describe('uploadProject', () => {
  it('creates the upload target, then PUTs the file with the type of its extension', async () => {
    const zipPath = join(dir, 'project.ZIP');
    const zipBytes = randomBytes(64 * 1024);
    await writeFile(zipPath, zipBytes);
    server = await startServer((req, res, body) => {
      if (req.method === 'POST') {
        sendJson(res, 201, {
          uploadUrl: `${server?.origin}/storage/up-1?sig=x`,
          slug: 'up-1',
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
        });
      } else {
        res.writeHead(sha256(body) === sha256(zipBytes) ? 200 : 400);
        res.end();
      }
    });
    const client = new RenderJobClient({ baseUrl: server.baseUrl, apiKey: 'rb_live_k' });
    let last = 0;
    const target = await client.uploadProject(zipPath, { onProgress: (sent) => (last = sent) });

    expect(target.slug).toBe('up-1');
    expect(last).toBe(zipBytes.length);
    const [create, put] = server.requests;
    expect(create?.url).toBe(`${API_PREFIX}/uploads`);
    expect(JSON.parse(create?.body ?? '')).toEqual({ fileName: 'project.ZIP', fileType: 'zip' });
    expect(put?.method).toBe('PUT');
    expect(put?.headers['content-type']).toBe('application/zip');
    expect(put?.headers['authorization']).toBeUndefined();
  });

  it('refuses a file whose type it cannot tell, before any request', async () => {
    server = await startServer((_req, res) => sendJson(res, 500, {}));
    const client = new RenderJobClient({ baseUrl: server.baseUrl, apiKey: 'rb_live_k' });
    await expect(client.uploadProject(join(dir, 'notes.txt'))).rejects.toThrow(/fileType/);
    expect(server.requests).toHaveLength(0);
  });
});

describe('file types', () => {
  it('maps extensions to fileType and Content-Type', () => {
    expect(fileTypeFor('a.blend')).toBe('blend');
    expect(fileTypeFor('A.Zip')).toBe('zip');
    expect(fileTypeFor('a.blend1')).toBeUndefined();
    expect(contentTypeFor('a.zip')).toBe('application/zip');
    expect(contentTypeFor('a.blend')).toBe('application/octet-stream');
    expect(contentTypeFor('a.bin')).toBe('application/octet-stream');
  });
});
