import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { API_PREFIX } from '../shared/constants.js';
import type { JobRecord } from './ports/jobs.js';
import { buildApp } from './app.js';
import type { ServiceConfig } from './config.js';
import { REDACT_PATHS, serializeRequest } from './http/log-redaction.js';
import { logDestination } from './http/log-format.js';
import { createMetrics, type Metrics } from './metrics/registry.js';
import { openStack, type Stack } from './stack.js';
import { enqueueRenderComplete, WebhookDispatcher, type DispatcherOptions } from './webhooks/delivery.js';
import { RetentionSweeper, type RetentionOptions } from './retention.js';
import { BlobCollector, type BlobCollectorOptions } from './blobs/collector.js';
import { startWorker, type StartedWorker, type WorkerTuning } from './worker/start.js';
import { buildWorkerApiApp, workerApiEnabled } from './worker-api/server.js';

/** `http://host:port` of an address fastify listened on (0.0.0.0 and :: reached through loopback). */
function listenedOrigin(address: string): string {
  const u = new URL(address);
  if (u.hostname === '0.0.0.0') u.hostname = '127.0.0.1';
  if (u.hostname === '[::]') u.hostname = '[::1]';
  return u.origin;
}

export interface RunningService {
  app: FastifyInstance;
  /** Origin, e.g. `http://127.0.0.1:8420`. */
  origin: string;
  /** `origin` + `/api/external/v1`. */
  baseUrl: string;
  /**
   * The adapters behind the app (the in-process worker runtime plugs into these), with what the
   * worker API needs, so a second app on them (tests) is whole.
   */
  ports: Stack['deps'] & { onJobCompleted: (rec: JobRecord) => Promise<void> };
  webhooks: Stack['webhooks'];
  engines: Stack['engines'];
  leases: Stack['leases'];
  metrics: Metrics;
  /** Origin of the worker API's own listener (config.workerApiPort); undefined: it is served on `origin`. */
  workerApiOrigin: string | undefined;
  /** The in-process worker (idle when `workers` is 0 or no Blender was found). */
  worker: StartedWorker;
  retention: RetentionSweeper;
  /** Deletes blobs unused for config.blobRetentionDays that nothing live references. */
  blobCollector: BlobCollector;
  close(): Promise<void>;
}

/** `format` picks the stream when no `destination` is given (default JSON lines on stdout). */
export function createLogger(
  level: ServiceConfig['logLevel'],
  destination?: pino.DestinationStream,
  format: ServiceConfig['logFormat'] = 'json',
): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { req: serializeRequest as never, err: pino.stdSerializers.err },
    },
    destination ?? logDestination(format),
  );
}

/** Opens the embedded stack, listens, and returns a handle whose close() drains and shuts down. */
export interface StartOptions {
  /** pino logger, or false for none. Default: a logger at `config.logLevel` on stdout. */
  logger?: Logger | false;
  version?: string;
  /** Worker knobs beyond ServiceConfig (tests). */
  worker?: WorkerTuning;
  /** Webhook dispatcher knobs (tests shorten the retry delays). */
  webhooks?: Omit<DispatcherOptions, 'store' | 'logger'>;
  /** Retention sweeper knobs (tests). */
  retention?: RetentionOptions;
  /** Blob collector knobs (tests: a clock days ahead). */
  blobCollector?: BlobCollectorOptions;
  /** The clock sessions and upload URLs expire by, epoch ms (AppDeps.clock). Default Date.now (tests move it). */
  clock?: () => number;
}

/**
 * Opens the embedded stack, listens, starts the worker and webhook delivery, and returns a handle whose
 * close() drains and shuts down.
 */
export async function startService(config: ServiceConfig, opts: StartOptions = {}): Promise<RunningService> {
  const logger = opts.logger === undefined ? createLogger(config.logLevel, undefined, config.logFormat) : opts.logger;
  const log = logger || pino({ level: 'silent' });
  const stack = await openStack(config, {
    onQueueError: (err) => log.warn({ err: err.message }, 'task queue connection problem'),
  });
  const metrics = createMetrics();
  metrics.watchQueue(stack.deps.queue);
  const onCompleted = async (rec: JobRecord) => void (await enqueueRenderComplete(stack.webhooks, rec.job));
  let worker: StartedWorker | undefined;
  const events = {
    enqueued: () => worker?.kick(),
    canceled: (jobId: string) => worker?.runtime?.cancelJob(jobId),
  };
  const appDeps = {
    ...stack.deps,
    events,
    logger,
    metrics,
    onJobCompleted: onCompleted,
    ...(opts.version ? { version: opts.version } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
  };
  const app = await buildApp(appDeps);
  const workerApp =
    config.workerApiPort !== undefined && workerApiEnabled(appDeps) ? await buildWorkerApiApp(appDeps) : undefined;
  if (config.workerToken) {
    log.warn(
      'RENDERBRIDGE_WORKER_TOKEN on the service is a deprecated farm-wide worker token: whoever holds it can ' +
        'act on every job of every workspace. Create one token per worker (renderbridge admin ' +
        'create-worker-token --name NAME), move the workers to them, then unset it on the service.',
    );
  }
  let workerApiOrigin: string | undefined;
  try {
    await app.listen({ host: config.host, port: config.port });
    if (workerApp)
      workerApiOrigin = listenedOrigin(
        await workerApp.listen({ host: config.workerApiHost ?? config.host, port: config.workerApiPort! }),
      );
  } catch (err) {
    await workerApp?.close();
    await app.close();
    await stack.close();
    throw err;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const origin = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  stack.setPublicUrl(origin);
  const dispatcher = new WebhookDispatcher({
    store: stack.webhooks,
    logger: log.child({ component: 'webhooks' }),
    ...opts.webhooks,
  });
  dispatcher.start();
  const sweeper = new RetentionSweeper(
    {
      ...stack.deps,
      workerRegistry: stack.workerRegistry,
      log: log.child({ component: 'retention' }),
      lease: { store: stack.leases, holder: config.instanceId },
    },
    { finishedTaskRetentionMs: config.finishedTaskRetentionDays * 86_400_000, ...opts.retention },
  );
  sweeper.start();
  // Runs even with the extension turned off: blobs sent while it was on still expire.
  const collector = new BlobCollector(
    {
      blobs: stack.blobs,
      storage: stack.deps.storage,
      log: log.child({ component: 'blob-collector' }),
      lease: { store: stack.leases, holder: config.instanceId },
    },
    { retentionMs: config.blobRetentionDays * 86_400_000, ...opts.blobCollector },
  );
  collector.start();
  try {
    worker = await startWorker(
      { ...stack.deps, onCompleted, metrics, registry: stack.workerRegistry, farm: stack.workerRegistry },
      config,
      log.child({ component: 'worker' }),
      { ...(opts.version ? { version: opts.version } : {}), ...opts.worker },
    );
  } catch (err) {
    await collector.stop();
    await sweeper.stop();
    await dispatcher.stop();
    await workerApp?.close();
    await app.close();
    await stack.close();
    throw err;
  }
  const started = worker;
  let closing: Promise<void> | undefined;
  return {
    app,
    origin,
    baseUrl: `${config.publicUrl ?? origin}${API_PREFIX}`,
    ports: { ...stack.deps, onJobCompleted: onCompleted },
    webhooks: stack.webhooks,
    engines: stack.engines,
    leases: stack.leases,
    metrics,
    workerApiOrigin,
    worker: started,
    retention: sweeper,
    blobCollector: collector,
    close: () =>
      (closing ??= (async () => {
        await workerApp?.close();
        await app.close();
        // Running Blender processes are killed; their tasks go back to the queue for the next start.
        await started.stop();
        await sweeper.stop();
        await collector.stop();
        await dispatcher.stop();
        await stack.close();
      })()),
  };
}
