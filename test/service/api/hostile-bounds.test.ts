// The hostile sweep of test/service/api/hostile.test.ts, for what issue 25 bounds: generated blob queries
// (thousands of huge blobs, blobs of many parts, hostile continuation points), requeues with flood
// frame ranges (100 copies of Blender's whole frame space, stepped and single frames), and floods
// of streams. Every answer is a declared success or a declared 4xx with the spec's error body,
// within seconds: never a 500 and never a hang. Runs on every stack.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobQueryResult, MAX_PARTS_PER_QUERY_ANSWER } from '../../../shared/api/blob-upload.js';
import { ErrorBody } from '../../../shared/api/error-body.js';
import type { Job } from '../../../shared/api/job.js';
import { ERRORS, type ErrorName } from '../../../shared/errors.js';
import { COMMON_ERRORS, ROUTES, type RouteDef, type RouteName } from '../../../shared/routes.js';
import { waitUntil } from '../../helpers/e2e.js';
import { createJob } from '../../helpers/flow.js';
import { api } from '../../helpers/http.js';
import { sendRaw, type Seen } from '../../helpers/hostile.js';
import { openStream, type OpenStream } from '../../helpers/stream-client.js';
import { startTestService, type TestService } from '../../helpers/service.js';

const RUNS = Number(process.env.HOSTILE_RUNS ?? 120);
const HANG_MS = 5000;
const MAX_FRAME = 1_048_574;
const PER_KEY = 4;

let svc: TestService;
let ended: Job;
/** A job that never ends: follows of it stay open. */
let quiet: Job;

beforeAll(async () => {
  svc = await startTestService({ rateLimitMax: 1_000_000, maxStreamsPerKey: PER_KEY });
  // A canceled job that asked for frames 1-250: a requeue of it reaches the frame checks.
  const job = await createJob(api(svc.baseUrl, svc.apiKey));
  const jobs = svc.service.ports.jobs;
  await jobs.update(job.id, { requestedConfig: { frameRanges: ['1-250'] } as Job['requestedConfig'] });
  ended = (await jobs.transition(job.id, ['created'], 'canceled'))!.job as Job;
  quiet = await createJob(api(svc.baseUrl, svc.apiKey));
});
afterAll(() => svc?.close());

function post(name: RouteName, path: string, body: unknown): Promise<Seen> {
  const route: RouteDef = ROUTES[name];
  return sendRaw(`${svc.baseUrl}${path}`, {
    method: route.method,
    headers: { accept: 'application/json', authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    timeoutMs: HANG_MS,
  });
}

/** A declared success matching the route's schema, or a declared 4xx with the spec's error body and its status. */
function declared(name: RouteName, seen: Seen, why: string): void {
  const route: RouteDef = ROUTES[name];
  why = `${why} -> ${seen.status} ${JSON.stringify(seen.body).slice(0, 300)}`;
  expect(seen.status, why).toBeLessThan(500);
  expect(seen.ms, why).toBeLessThan(HANG_MS);
  if (seen.status < 300) {
    expect(route.responses[seen.status]?.safeParse(seen.body).success, why).toBe(true);
    return;
  }
  const err = ErrorBody.safeParse(seen.body);
  expect(err.success, `${why}: not the spec's error body`).toBe(true);
  const errName = err.data!.name as ErrorName;
  expect([...route.errors, ...COMMON_ERRORS, 'PAYLOAD_TOO_LARGE'], why).toContain(errName);
  expect(seen.status, why).toBe(ERRORS[errName].status);
}

const hex = (i: number) => createHash('sha256').update(`hostile-${i}`).digest('hex');
const sizeArb = fc.oneof(
  fc.constant(64 * 2 ** 30),
  fc.constant(Number.MAX_SAFE_INTEGER),
  fc.integer({ min: 1, max: 2 ** 31 }),
  fc.integer({ min: 1, max: 2 ** 40 }),
);

describe('bounded requests under hostile input', () => {
  it('POST /uploads/blobs/query: thousands of huge blobs, many parts, hostile firstPart', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2000 }),
        sizeArb,
        fc.option(fc.oneof(fc.integer({ min: 1, max: 20_000 }), fc.constant(Number.MAX_SAFE_INTEGER)), {
          nil: undefined,
        }),
        async (count, size, firstPart) => {
          const blobs = Array.from({ length: count }, (_, i) => ({ sha256: hex(i), size }));
          const seen = await post('queryBlobs', ROUTES.queryBlobs.path, { blobs, ...(firstPart ? { firstPart } : {}) });
          declared('queryBlobs', seen, `${count} blobs of ${size} bytes from part ${firstPart}`);
          if (seen.status === 200) {
            const parts = BlobQueryResult.parse(seen.body).missing.reduce((n, m) => n + m.parts.length, 0);
            expect(parts).toBeLessThanOrEqual(MAX_PARTS_PER_QUERY_ANSWER);
          }
        },
      ),
      { numRuns: Math.min(RUNS, 40) },
    );
  });

  it('POST /jobs/{id}/requeue: flood frame ranges are checked as intervals, answered within seconds', async () => {
    const whole = `0-${MAX_FRAME}`;
    const range = fc.oneof(
      fc.constant(whole),
      fc.integer({ min: 1, max: 1000 }).map((step) => `${whole}x${step}`),
      fc.integer({ min: 0, max: MAX_FRAME }).map(String),
      fc
        .tuple(fc.integer({ min: 0, max: MAX_FRAME }), fc.integer({ min: 0, max: MAX_FRAME }))
        .map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
      fc.constantFrom('1-250', '250-1', '1-250x0', `0-${MAX_FRAME + 1}`, '9999999'),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(range, { minLength: 1, maxLength: 100 }), fc.boolean(), async (ranges, asText) => {
        const seen = await post('requeueJob', `/jobs/${ended.id}/requeue`, {
          frames: asText ? ranges.join(',') : ranges,
        });
        declared('requeueJob', seen, `requeue of ${ranges.length} ranges (${ranges.slice(0, 3).join(',')}...)`);
      }),
      { numRuns: RUNS },
    );
  });

  it(
    'GET /events and GET /jobs/{id}/logs?follow=true: a flood of streams gets 200 up to the cap, then 429 ' +
      'TOO_MANY_STREAMS',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom('events', 'follow'), { minLength: PER_KEY + 1, maxLength: PER_KEY + 12 }),
          async (kinds) => {
            const streams: OpenStream[] = [];
            try {
              const answers = await Promise.all(
                kinds.map(async (kind) => {
                  const t0 = performance.now();
                  const path = kind === 'events' ? '/events' : `/jobs/${quiet.id}/logs?follow=true`;
                  const s = await openStream(
                    `${svc.baseUrl}${path}`,
                    { authorization: `Bearer ${svc.apiKey}`, accept: 'text/event-stream, text/plain' },
                    HANG_MS,
                  );
                  streams.push(s);
                  return { kind, s, ms: performance.now() - t0 };
                }),
              );
              const why = JSON.stringify(answers.map((a) => [a.kind, a.s.status]));
              expect(answers.filter((a) => a.s.status === 200).length, why).toBe(PER_KEY);
              for (const a of answers) {
                expect(a.ms, why).toBeLessThan(HANG_MS);
                if (a.s.status === 200) continue;
                expect([a.s.status, ErrorBody.parse(await a.s.json()).name], why).toEqual([429, 'TOO_MANY_STREAMS']);
                expect(Number(a.s.headers['retry-after']), why).toBeGreaterThan(0);
              }
            } finally {
              for (const s of streams) s.close();
            }
            // Every place comes back once the streams are closed.
            await waitUntil('the stream places freed', async () => {
              const s = await openStream(`${svc.baseUrl}/events`, {
                authorization: `Bearer ${svc.apiKey}`,
                accept: 'text/event-stream',
              });
              s.close();
              return s.status === 200;
            });
          },
        ),
        { numRuns: 8 },
      );
    },
  );
});
