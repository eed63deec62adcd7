// The content-addressed upload as a client does it, in raw HTTP: query, PUT parts, commit.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import {
  BlobQueryResult,
  CommittedUpload,
  type BlobPartResult,
  type MissingBlob,
} from '../../shared/api/blob-upload.js';
import type { Call } from './flow.js';
import { putBytes } from './flow.js';
import type { Answer } from './http.js';

export interface TestFile {
  path: string;
  bytes: Buffer;
}

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
export const ref = (b: Buffer) => ({ sha256: sha256(b), size: b.length });

/** Bytes that do not compress, `size` long, different per seed. */
export function noise(seed: string, size: number): Buffer {
  const out = Buffer.alloc(size);
  let block = createHash('sha256').update(seed).digest();
  for (let at = 0; at < size; at += block.length) {
    block.copy(out, at);
    block = createHash('sha256').update(block).digest();
  }
  return out;
}

export async function queryBlobs(call: Call, bytes: readonly Buffer[]): Promise<BlobQueryResult> {
  const r = await call('POST', '/uploads/blobs/query', { blobs: bytes.map(ref) });
  if (r.status !== 200) throw new Error(`POST /uploads/blobs/query: ${r.status} ${JSON.stringify(r.body)}`);
  return BlobQueryResult.parse(r.body);
}

/** PUTs one part's bytes, raw or gzip-encoded. */
export function putPart(
  url: string,
  part: Buffer,
  opts: { gzip?: boolean; headers?: Record<string, string> } = {},
): Promise<Answer<BlobPartResult>> {
  const body = opts.gzip ? gzipSync(part) : part;
  const headers = { ...(opts.gzip ? { 'content-encoding': 'gzip' } : {}), ...opts.headers };
  return putBytes(url, body, 'application/octet-stream', headers) as Promise<Answer<BlobPartResult>>;
}

/** Sends every part not yet uploaded of the missing blobs, `parallel` PUTs at a time; returns the answers. */
export async function sendMissing(
  missing: readonly MissingBlob[],
  byHash: Map<string, Buffer>,
  parallel = 4,
): Promise<Answer<BlobPartResult>[]> {
  const jobs = missing.flatMap((m) => m.parts.filter((p) => !p.uploaded).map((p) => ({ m, p })));
  const answers: Answer<BlobPartResult>[] = [];
  let next = 0;
  const run = async () => {
    while (next < jobs.length) {
      const { m, p } = jobs[next++]!;
      const bytes = byHash.get(m.sha256)!;
      const a = await putPart(p.uploadUrl, bytes.subarray(p.offset, p.offset + p.length));
      if (a.status !== 200)
        throw new Error(`PUT part ${p.partNumber} of ${m.sha256}: ${a.status} ${JSON.stringify(a.body)}`);
      answers.push(a);
    }
  };
  await Promise.all(Array.from({ length: parallel }, run));
  return answers;
}

export function entries(files: readonly TestFile[]) {
  return files.map((f) => ({ path: f.path, ...ref(f.bytes) }));
}

export async function commit(call: Call, files: readonly TestFile[], fileName = 'project.zip'): Promise<Answer> {
  return call('POST', '/uploads/commit', { fileName, entries: entries(files) });
}

/** Query, send what is missing, commit: the slug of an ordinary upload. */
export async function uploadProject(call: Call, files: readonly TestFile[]): Promise<CommittedUpload> {
  const q = await queryBlobs(
    call,
    files.map((f) => f.bytes),
  );
  await sendMissing(q.missing, new Map(files.map((f) => [sha256(f.bytes), f.bytes])));
  const r = await commit(call, files);
  if (r.status !== 201) throw new Error(`POST /uploads/commit: ${r.status} ${JSON.stringify(r.body)}`);
  return CommittedUpload.parse(r.body);
}
