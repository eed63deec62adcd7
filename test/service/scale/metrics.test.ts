// GET /metrics in Prometheus text format, on the service (HTTP latency, queue depth, and the
// in-process worker's tasks and frames after a real render) and on a worker's own server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopbackHost, startMetricsServer } from '../../../service/metrics/http.js';
import { createMetrics } from '../../../service/metrics/registry.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { errorBody } from '../../helpers/http.js';
import { startE2E, submit, tinyRender, validationOutcome, waitUntil, type E2E } from '../../helpers/e2e.js';
import { startTestService, type TestService } from '../../helpers/service.js';

/** The value of one sample line, e.g. `renderbridge_queue_tasks{state="queued"}`. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : undefined;
}

describe('service /metrics', () => {
  let svc: TestService;
  beforeAll(async () => (svc = await startTestService()));
  afterAll(() => svc.close());

  it('reports request latency by route pattern and the queue depth', async () => {
    await fetch(`${svc.baseUrl}/jobs`, { headers: { authorization: `Bearer ${svc.apiKey}` } });
    await svc.service.ports.queue.enqueue({ id: 'metrics-probe', jobId: 'metrics-job', kind: 'validate' });
    const r = await fetch(`${svc.origin}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/plain');
    const text = await r.text();
    expect(
      sample(
        text,
        'renderbridge_http_request_duration_seconds_count{method="GET",route="/api/external/v1/jobs",status="200"}',
      ),
    ).toBe(1);
    // Route patterns, never raw URLs with ids.
    expect(text).not.toMatch(/route="[^"]*[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(sample(text, 'renderbridge_queue_tasks{state="queued"}')).toBe(1);
    expect(text).not.toContain(svc.apiKey);
    // The process's own health is there too, the event-loop lag sampled every 100 ms (not prom-client's 10 ms).
    expect(text).toMatch(/^renderbridge_nodejs_eventloop_lag_p99_seconds \d/m);
    expect(text).toMatch(/^renderbridge_process_cpu_seconds_total \d/m);
  });

  it('is closed on a service that listens beyond loopback without a metrics token, saying what to set', async () => {
    const open = await startTestService({ host: '0.0.0.0' });
    try {
      const r = await fetch(`http://127.0.0.1:${new URL(open.origin).port}/metrics`);
      expect(r.status).toBe(401);
      const body = errorBody({ status: 401, headers: r.headers, body: await r.json() });
      expect(body.name).toBe('METRICS_UNAUTHORIZED');
      expect(body.message).toMatch(/listens beyond loopback.*set RENDERBRIDGE_METRICS_TOKEN/);
    } finally {
      await open.close();
    }
    expect(
      isLoopbackHost('127.0.0.1') && isLoopbackHost('::1') && isLoopbackHost('[::1]') && isLoopbackHost('localhost'),
    ).toBe(true);
    expect(isLoopbackHost('0.0.0.0') || isLoopbackHost('::') || isLoopbackHost('10.0.0.5')).toBe(false);
  });

  it('asks for the metrics token when one is set', async () => {
    const guarded = await startTestService({ metricsToken: 'scrape-secret-123' });
    try {
      const no = await fetch(`${guarded.origin}/metrics`);
      expect(no.status).toBe(401);
      expect(errorBody({ status: 401, headers: no.headers, body: await no.json() }).name).toBe('METRICS_UNAUTHORIZED');
      const wrong = await fetch(`${guarded.origin}/metrics`, { headers: { authorization: 'Bearer nope' } });
      expect(wrong.status).toBe(401);
      const ok = await fetch(`${guarded.origin}/metrics`, { headers: { authorization: 'Bearer scrape-secret-123' } });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('renderbridge_queue_tasks');
    } finally {
      await guarded.close();
    }
  });
});

describe('worker metrics', () => {
  let e2e: E2E;
  beforeAll(async () => (e2e = await startE2E()), 60_000);
  afterAll(() => e2e.svc.close());

  it(
    'counts frames rendered, render seconds and tasks by outcome after a real render',
    { timeout: 180_000 },
    async () => {
      const { client, svc } = e2e;
      const id = await submit(client, await buildFixture('basic'));
      expect((await validationOutcome(client, id)).status).toBe('validated');
      await client.renderJob(id, tinyRender('1-3'));
      expect(
        (await client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 200, timeoutMs: 150_000 })).status,
      ).toBe('completed');
      // The job turns completed inside its finalize task, which is counted once it ends, moments later.
      const text = await waitUntil(
        'the finalize task to be counted',
        async () => {
          const t = await (await fetch(`${svc.origin}/metrics`)).text();
          return sample(t, 'renderbridge_tasks_total{kind="finalize",outcome="done"}') !== undefined ? t : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      expect(sample(text, 'renderbridge_frames_rendered_total')).toBe(3);
      expect(sample(text, 'renderbridge_render_seconds_total')).toBeGreaterThan(0);
      expect(sample(text, 'renderbridge_tasks_total{kind="validate",outcome="done"}')).toBe(1);
      expect(sample(text, 'renderbridge_tasks_total{kind="finalize",outcome="done"}')).toBe(1);
      expect(sample(text, 'renderbridge_tasks_running{kind="render-chunk"}')).toBe(0);
      expect(text).toMatch(
        /renderbridge_worker_info\{worker="[^"]+",blender="\d+\.\d+\.\d+[^"]*",gpus="[^"]*",vram_mb="[^"]*"\} 1/,
      );
    },
  );

  it("serves a worker process's registry on its own port, with the token when set", async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.taskStarted('render-chunk');
    metrics.taskEnded('render-chunk', 'done', 2.5, 4);
    const served = await startMetricsServer(metrics, { host: '127.0.0.1', port: 0, token: 'w-token' });
    try {
      expect((await fetch(served.url)).status).toBe(401);
      expect(
        (await fetch(served.url.replace('/metrics', '/other'), { headers: { authorization: 'Bearer w-token' } }))
          .status,
      ).toBe(404);
      const text = await (await fetch(served.url, { headers: { authorization: 'Bearer w-token' } })).text();
      expect(sample(text, 'renderbridge_frames_rendered_total')).toBe(4);
      expect(sample(text, 'renderbridge_render_seconds_total')).toBe(2.5);
    } finally {
      await served.close();
    }
  });
});
