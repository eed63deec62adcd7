// Prometheus metrics of the service and its workers, on a registry passed in (never prom-client's
// global one): two services or a service and a worker in one process keep separate counts.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { QueueHousekeeping, TaskKind } from '../ports/tasks.js';

export type TaskOutcome = 'done' | 'retried' | 'failed' | 'canceled' | 'released';

/** What the worker runtime reports; a no-op when metrics are off. */
export interface WorkerMetrics {
  taskStarted(kind: TaskKind): void;
  taskEnded(kind: TaskKind, outcome: TaskOutcome, seconds: number, frames: number): void;
}

export interface Metrics extends WorkerMetrics {
  registry: Registry;
  /** One finished HTTP request (route is the pattern, never the raw URL: ids would explode cardinality). */
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  /** Queue depth by state, read from the queue at each scrape. */
  watchQueue(queue: Pick<QueueHousekeeping, 'counts'>): void;
  /** This worker's inventory, as a constant 1 labelled with what it offers. */
  describeWorker(info: { worker: string; blender: string[]; gpus: { name: string; vramMb: number | null }[] }): void;
}

/** How often the event-loop lag histogram samples (prom-client's default is 10 ms). */
export const EVENT_LOOP_SAMPLE_MS = 100;

export function createMetrics(opts: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  // The event-loop lag histogram samples on a timer: prom-client's default 10 ms woke the process
  // 100 times a second, idle or not, beside Blender (about a third of an idle service's CPU).
  // Sampled every 100 ms, each scrape still sums a few hundred samples, and a stall is still
  // measured to the nanosecond.
  if (opts.defaultMetrics ?? true)
    collectDefaultMetrics({
      register: registry,
      prefix: 'renderbridge_',
      eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
    });
  const http = new Histogram({
    name: 'renderbridge_http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const httpChildren = new Map<string, { observe(value: number): void }>();
  const running = new Gauge({
    name: 'renderbridge_tasks_running',
    help: 'Tasks this process is running, by kind',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const ended = new Counter({
    name: 'renderbridge_tasks_total',
    help: 'Tasks this process ended, by kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  });
  const taskSeconds = new Histogram({
    name: 'renderbridge_task_duration_seconds',
    help: 'Task run time by kind',
    labelNames: ['kind'] as const,
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14400],
    registers: [registry],
  });
  const frames = new Counter({
    name: 'renderbridge_frames_rendered_total',
    help: 'Frames rendered by render chunks that finished',
    registers: [registry],
  });
  const renderSeconds = new Counter({
    name: 'renderbridge_render_seconds_total',
    help: 'Wall-clock seconds spent in render chunks',
    registers: [registry],
  });
  const workerInfo = new Gauge({
    name: 'renderbridge_worker_info',
    help: 'What this worker offers: Blender versions, GPUs and their memory',
    labelNames: ['worker', 'blender', 'gpus', 'vram_mb'] as const,
    registers: [registry],
  });
  let queue: Pick<QueueHousekeeping, 'counts'> | undefined;
  new Gauge({
    name: 'renderbridge_queue_tasks',
    help: 'Tasks in the shared queue by state (queue depth: state="queued")',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      if (!queue) return;
      // A scrape during a queue outage reports nothing rather than failing the whole page.
      const counts = await queue.counts().catch(() => undefined);
      if (!counts) return;
      for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
    },
  });
  return {
    registry,
    httpRequest: (method, route, status, seconds) => {
      // One labelled child per (method, route pattern, status), looked up by a string: cheaper
      // than prom-client hashing a label object on every request. Bounded by the route table.
      const key = `${method} ${status} ${route}`;
      let child = httpChildren.get(key);
      if (!child) httpChildren.set(key, (child = http.labels(method, route, String(status))));
      child.observe(seconds);
    },
    taskStarted: (kind) => running.inc({ kind }),
    taskEnded: (kind, outcome, seconds, n) => {
      running.dec({ kind });
      ended.inc({ kind, outcome });
      taskSeconds.observe({ kind }, seconds);
      if (kind === 'render-chunk' && outcome === 'done') {
        frames.inc(n);
        renderSeconds.inc(seconds);
      }
    },
    watchQueue: (q) => void (queue = q),
    describeWorker: (info) =>
      workerInfo.set(
        {
          worker: info.worker,
          blender: info.blender.join(','),
          gpus: info.gpus.map((g) => g.name).join(',') || 'none',
          vram_mb: info.gpus.map((g) => g.vramMb ?? 0).join(',') || '0',
        },
        1,
      ),
  };
}
