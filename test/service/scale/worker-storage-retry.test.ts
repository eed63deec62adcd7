// A keyless worker's transfers go straight to S3, so S3's own hiccups (500, 503 SlowDown) reach it
// unmediated: each read, whole-object PUT and part is tried again on a fresh URL, as the SDK
// retries in direct mode. A proxy in front of s3rver answers the first try of each with a 503.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runForJob } from '../../../service/job-scope.js';
import { startKeylessFarm, type KeylessFarm } from '../../helpers/keyless-worker.js';

let farm: KeylessFarm;
let proxy: Server;
/** Method and path of each request the proxy refused. */
const refused: string[] = [];
/** Method and path (under staging/) of the requests that got their 503: each gets one. */
const seen = new Set<string>();

beforeAll(async () => {
  farm = await startKeylessFarm({
    endpoint: async (s3rver) => {
      const up = new URL(s3rver);
      proxy = createServer((req, res) => {
        const path = (req.url ?? '').split('?')[0]!;
        const id = `${req.method} ${path}`;
        // Only a worker's own transfers (signed URLs carry X-Amz-Signature), never the service's SDK calls.
        if (path.includes('/staging/') && (req.url ?? '').includes('X-Amz-Signature') && !seen.has(id)) {
          seen.add(id);
          refused.push(id);
          req
            .resume()
            .on('end', () =>
              res.writeHead(503, { 'content-type': 'application/xml' }).end('<Error><Code>SlowDown</Code></Error>'),
            );
          return;
        }
        const forward = request(
          { host: up.hostname, port: up.port, path: req.url, method: req.method, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        req.pipe(forward);
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    },
  });
});
afterAll(async () => {
  await farm?.close();
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
});

describe('S3 answering 503 once', () => {
  it('a keyless worker stores and reads whole objects and parts all the same', async () => {
    const held = await farm.holdJob(undefined, {
      multipartAboveBytes: 6 * 1024 * 1024,
      partSizeBytes: 5 * 1024 * 1024,
    });
    const small = `staging/${held.jobId}/frames/r1`;
    const large = `staging/${held.jobId}/frames/r2`;
    const big = Buffer.alloc(11 * 1024 * 1024, 7);
    await runForJob(held.jobId, async () => {
      await held.storage.put(small, Readable.from([Buffer.from('frame one')]));
      await held.storage.put(large, Readable.from([big]));
      expect((await buffer(await held.storage.get(small))).toString()).toBe('frame one');
      expect((await buffer(await held.storage.get(large))).equals(big)).toBe(true);
    });
    // Each was refused once: the whole PUT, the first part (parts share a path), the two reads.
    expect(refused.filter((r) => r.startsWith('PUT') && r.endsWith('/r1'))).toHaveLength(1);
    expect(refused.filter((r) => r.startsWith('PUT') && r.endsWith('/r2'))).toHaveLength(1);
    expect(refused.filter((r) => r.startsWith('GET'))).toHaveLength(2);
  });
});
