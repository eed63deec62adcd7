// A blob query is bounded (issue 25): what it lacks must fit the per-job quota before one URL is
// signed, and one answer lists at most MAX_PARTS_PER_QUERY_ANSWER (1,000) parts, the rest fetched by asking again from
// its `continueFrom`. The typed client follows the pages, so an honest project larger than one answer
// still uploads and commits.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobQueryResult, MAX_PARTS_PER_QUERY_ANSWER } from '../../../shared/api/blob-upload.js';
import { URLS_PER_TOKEN } from '../../../service/routes/blob-query.js';
import { RenderJobClient } from '../../../shared/client/client.js';
import { noise, ref, sha256 } from '../../helpers/blob-flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { useTestService } from '../../helpers/service.js';
import { appOn, type AppOn } from '../dashboard/app-on.js';

const PART = 64 * 1024;

const used = useTestService({ blobPartSizeBytes: PART, rateLimitMax: 1_000_000 });
const { call } = used;

const fake = (i: number, size: number) => ({ sha256: sha256(Buffer.from(`fake-${i}`)), size });

describe('blob query bounds', () => {
  it('refuses, before signing anything, a query whose missing blobs add up to over the per-job quota', async () => {
    const quota = used.svc.config.unpackQuotaBytes;
    // The attack of the issue: 2,000 blobs each at the quota (about 200 KB of JSON).
    const flood = Array.from({ length: 2000 }, (_, i) => fake(i, quota));
    const r = await call('POST', '/uploads/blobs/query', { blobs: flood });
    expect([r.status, errorBody(r).name]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    expect(errorBody(r).metadata).toMatchObject({ maxBytes: quota, missingBytes: 2000 * quota, missingCount: 2000 });
    expect(errorBody(r).message).toMatch(/one project at a time/);
    // Still serving: the next query answers.
    const ok = await call('POST', '/uploads/blobs/query', { blobs: [fake(1, 10)] });
    expect(ok.status).toBe(200);
  });

  it('lists at most MAX_PARTS_PER_QUERY_ANSWER parts per answer and continues where it stopped', async () => {
    const parts = MAX_PARTS_PER_QUERY_ANSWER + Math.floor(MAX_PARTS_PER_QUERY_ANSWER / 4);
    const big = fake(7, parts * PART - 5);
    const small = fake(8, 100);
    const first = BlobQueryResult.parse((await call('POST', '/uploads/blobs/query', { blobs: [small, big] })).body);
    expect(first.missing.map((m) => m.parts.length)).toEqual([1, MAX_PARTS_PER_QUERY_ANSWER - 1]);
    expect(first.missingTotal).toEqual({ count: 2, bytes: big.size + small.size });
    expect(first.continueFrom).toEqual({ index: 1, partNumber: MAX_PARTS_PER_QUERY_ANSWER });
    const next = await call('POST', '/uploads/blobs/query', {
      blobs: [big],
      firstPart: first.continueFrom!.partNumber,
    });
    const second = BlobQueryResult.parse(next.body);
    expect(second.continueFrom).toBeNull();
    const listed = second.missing[0]!.parts;
    expect([listed[0]!.partNumber, listed.at(-1)!.partNumber, listed.length]).toEqual([
      MAX_PARTS_PER_QUERY_ANSWER,
      parts,
      parts - MAX_PARTS_PER_QUERY_ANSWER + 1,
    ]);
    expect(listed.at(-1)!.length).toBe(PART - 5);
    // A firstPart past the first blob's parts is a 400 saying what to send.
    const past = await call('POST', '/uploads/blobs/query', { blobs: [small], firstPart: 2 });
    expect([past.status, errorBody(past).name, errorBody(past).details[0]!.path]).toEqual([
      400,
      'VALIDATION_ERROR',
      ['body', 'firstPart'],
    ]);
  });
});

describe('the typed client follows the pages', () => {
  let small: AppOn;
  let dir: string;
  beforeAll(async () => {
    // The same service with answers of 3 parts, so a real upload needs many pages.
    small = await appOn(used.svc, { blobQueryMaxParts: 3, onJobCompleted: async () => undefined });
    dir = await mkdtemp(path.join(tmpdir(), 'rb-pages-'));
  });
  afterAll(async () => {
    await small.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('uploads and commits a project of more parts than one answer holds', async () => {
    const files = await Promise.all(
      [PART * 2 + 10, PART * 3, 10, PART + 1].map(async (size, i) => {
        const bytes = noise(`page-${i}`, size);
        const source = path.join(dir, `f${i}.bin`);
        await writeFile(source, bytes);
        return { path: `t/f${i}.bin`, source, compression: 'none' as const, ...ref(bytes) };
      }),
    );
    const client = new RenderJobClient({ baseUrl: small.baseUrl, apiKey: used.svc.apiKey });
    const result = await client.uploadBlobs(files, { fileName: 'paged.zip' });
    expect(result.upload.fileCount).toBe(4);
    // 3 + 3 + 1 + 2 parts: three pages of at most 3.
    expect(result.partsSent).toBe(9);
    expect(result.queries).toBe(3);
    // Everything is held now: one query, nothing missing.
    const again = BlobQueryResult.parse(
      (await call('POST', '/uploads/blobs/query', { blobs: files.map((f) => ({ sha256: f.sha256, size: f.size })) }))
        .body,
    );
    expect(again.missing).toEqual([]);
    expect(again.continueFrom).toBeNull();
  });
});

describe('a query is charged to its key by the work it asks for', () => {
  const limited = useTestService({ blobPartSizeBytes: PART, rateLimitMax: 25, rateLimitWindowMs: 600_000 });

  it('costs one token per URLS_PER_TOKEN URLs signed; refuses before signing when the budget is short', async () => {
    const q = limited.call;
    const full = { blobs: [fake(20, MAX_PARTS_PER_QUERY_ANSWER * PART)] };
    const extra = MAX_PARTS_PER_QUERY_ANSWER / URLS_PER_TOKEN;
    const first = await q('POST', '/uploads/blobs/query', full);
    expect([first.status, first.headers.get('x-ratelimit-remaining')]).toEqual([200, String(25 - 1 - extra)]);
    const second = await q('POST', '/uploads/blobs/query', full);
    expect([second.status, second.headers.get('x-ratelimit-remaining')]).toEqual([200, String(25 - 2 * (1 + extra))]);
    const third = await q('POST', '/uploads/blobs/query', full);
    expect([third.status, errorBody(third).name]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    // The refused query took only its own request: a plain call still fits the budget.
    const plain = await q('GET', '/jobs');
    expect([plain.status, plain.headers.get('x-ratelimit-remaining')]).toEqual([200, String(25 - 2 * (1 + extra) - 2)]);
  });
});

describe('a key has at most two blob queries or commits in progress at once', () => {
  /** A query whose body is held back after its first byte: in progress until `finish`. */
  function heldQuery(
    baseUrl: string,
    key: string,
  ): { answer: Promise<Response>; finish(): Promise<{ status: number }> } {
    const body = new TextEncoder().encode(JSON.stringify({ blobs: [fake(30, 10)] }));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const stream = new ReadableStream<Uint8Array>({
      async start(c) {
        c.enqueue(body.subarray(0, 1));
        await released;
        c.enqueue(body.subarray(1));
        c.close();
      },
    });
    const answer = fetch(`${baseUrl}/uploads/blobs/query`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-length': String(body.length),
      },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    return {
      answer,
      async finish() {
        release();
        const res = await answer;
        await res.arrayBuffer();
        return { status: res.status };
      },
    };
  }

  it('refuses a third with 429 and Retry-After 1, serves another key meanwhile, the next once one ends', async () => {
    // Three held at once: whichever the service counts last is refused at once, its body unread. Which
    // one that is, is not known: on the scale stack authentication is asynchronous, so the order of
    // arrival is not the order of counting.
    const held = [0, 1, 2].map(() => heldQuery(used.svc.baseUrl, used.svc.apiKey));
    const refused = await Promise.race(held.map((h, i) => h.answer.then((res) => ({ i, res }))));
    const third = { status: refused.res.status, headers: refused.res.headers, body: await refused.res.json() };
    expect(third.status).toBe(429);
    expect(errorBody(third).name).toBe('RATE_LIMITED');
    expect(errorBody(third).message).toMatch(
      /already has 2 blob queries and commits in progress: wait for their answers/,
    );
    expect(third.headers.get('retry-after')).toBe('1');
    const other = api(used.svc.baseUrl, await used.svc.createApiKey('in-flight-other'));
    expect((await other('POST', '/uploads/blobs/query', { blobs: [fake(32, 10)] })).status).toBe(200);
    const [first, second] = held.filter((_, i) => i !== refused.i);
    expect((await first!.finish()).status).toBe(200);
    expect((await call('POST', '/uploads/blobs/query', { blobs: [fake(33, 10)] })).status).toBe(200);
    expect((await second!.finish()).status).toBe(200);
  });
});
