// The worker API client's failover across service URLs, against the real reference service and
// instances of its own that refuse, hang, answer 503 or drop the answer of a move they made.
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { WorkerApiError } from '../../../service/worker-api/client.js';
import { createJob } from '../../helpers/flow.js';
import { closedPortUrl, TOKEN, workerApiHarness } from './worker-api-harness.js';

const h = workerApiHarness();

describe('failover across service URLs', () => {
  it('moves past a closed port to the live service', async () => {
    const { id } = await createJob(h.call);
    const store = h.remote({ serviceUrls: [await closedPortUrl(), h.svc.origin] });
    expect((await store.getById(id))?.job.id).toBe(id);
    expect((await store.transition(id, ['created'], 'validating'))?.job.status).toBe('validating');
  });

  it('moves past an instance answering 503, and then keeps to the one that answered', async () => {
    let hits = 0;
    const sick = await h.serve((_req, res) => {
      hits++;
      res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'SERVICE_UNAVAILABLE' }));
    });
    const { id } = await createJob(h.call);
    const store = h.remote({ serviceUrls: [sick, h.svc.origin] });
    expect((await store.getById(id))?.job.id).toBe(id);
    await store.update(id, { normalizedSeconds: 3 });
    expect(hits).toBe(1);
    expect((await h.publicJob(id)).normalizedSeconds).toBe(3);
  });

  it('moves past an instance that does not answer within timeoutMs', async () => {
    const hung = await h.serve(() => undefined);
    const { id } = await createJob(h.call);
    const started = Date.now();
    expect((await h.remote({ serviceUrls: [hung, h.svc.origin], timeoutMs: 300 }).getById(id))?.job.id).toBe(id);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('does not retry a 4xx on another URL', async () => {
    let hits = 0;
    const refusing = await h.serve((_req, res) => {
      hits++;
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify({ message: 'no', name: 'UNAUTHORIZED', details: [], type: 'api', metadata: {} }));
    });
    const { id } = await createJob(h.call);
    const err = await h
      .remote({ serviceUrls: [refusing, h.svc.origin] })
      .getById(id)
      .catch((e: unknown) => e);
    expect((err as WorkerApiError).status).toBe(401);
    expect(String(err)).toContain(refusing);
    expect(hits).toBe(1);
  });

  it('gives up after retryForMs with a message naming each URL and what to check, never the token', async () => {
    const closed = await closedPortUrl();
    const started = Date.now();
    const err = await h
      .remote({ serviceUrls: [closed], retryForMs: 600 })
      .getById(randomUUID())
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(String(err)).toContain(`${closed} (ECONNREFUSED`);
    expect(String(err)).toMatch(/reachable from this worker/);
    expect(String(err)).not.toContain(TOKEN);
  });

  it('a transition whose answer was lost is retried safely: it reports the move it made, once', async () => {
    const live = new URL(h.svc.origin);
    let forwarded = 0;
    // Forwards the request to the service, which applies it, then drops the connection.
    const lossy = await h.serve((req, res) => {
      forwarded++;
      const up = request(
        { host: live.hostname, port: live.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          answer.resume().on('end', () => res.socket?.destroy());
        },
      );
      req.pipe(up);
    });
    const { id } = await createJob(h.call);
    const store = h.remote({ serviceUrls: [lossy, h.svc.origin] });
    const moved = await store.transition(id, ['created'], 'validating', { normalizedSeconds: 7 });
    expect(forwarded).toBe(1);
    expect(moved?.job).toMatchObject({ status: 'validating', normalizedSeconds: 7 });
    // A move someone else already made past `to` is still reported as not made.
    const lossy2 = h.remote({ serviceUrls: [lossy, h.svc.origin] });
    await h.jobs.transition(id, ['validating'], 'failed');
    expect(await lossy2.transition(id, ['validating'], 'validated')).toBeUndefined();
  });
});
