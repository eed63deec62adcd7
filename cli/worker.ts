import { hostname } from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import type { ServiceConfig } from '../service/config.js';
import { defaultConfig } from '../service/config-defaults.js';
import { startMetricsServer } from '../service/metrics/http.js';
import { createMetrics, type Metrics } from '../service/metrics/registry.js';
import type { ObjectStorage } from '../service/ports/storage.js';
import type { TaskQueue } from '../service/ports/tasks.js';
import type { WorkerJobStore } from '../service/ports/jobs.js';
import { createLogger } from '../service/server.js';
import { openQueue, openS3, openStack, openState } from '../service/stack.js';
import { enqueueRenderComplete } from '../service/webhooks/delivery.js';
import { RemoteWorkerJobs } from '../service/worker-api/remote-jobs.js';
import { RemoteWorkerReporter } from '../service/worker-api/remote-reporter.js';
import { RemoteFrameStats } from '../service/worker-api/remote-frame-stats.js';
import { RemoteTaskQueue } from '../service/worker-api/remote-queue.js';
import { RemoteWorkerStorage } from '../service/worker-api/remote-storage.js';
import { RemoteFarm } from '../service/worker-api/remote-farm.js';
import { VERSION } from './version.js';
import { startWorker, type WorkerPorts } from '../service/worker/start.js';
import { addEngineOptions, engineConfig, type EngineOptions } from './engines.js';
import { DATA_DIR_DEFAULT, resolveDataDir } from './options.js';
import { addSettingOptions, configValue, formatEffectiveConfig, s3Credentials, tableConfig } from './settings.js';
import { addRenderOptions, renderConfig, type RenderOptions } from './render-options.js';
import { addUnpackOptions, unpackConfig, type UnpackOptions } from './unpack-options.js';

interface WorkerOptions extends EngineOptions, UnpackOptions, RenderOptions {
  dataDir?: string;
  serviceUrl: string[];
  name: string;
  workers: number | 'auto';
  blender: string[];
  logLevel: string;
  leaseSeconds: number;
  chunkFrames?: number;
  metricsPort?: number;
  metricsHost: string;
  printConfig?: boolean;
}

/**
 * The name this worker runs under: its token's (the service scopes the token to leases and
 * heartbeats whose ids start `<name>:`). A --name that differs is refused rather than ignored.
 * The deprecated farm-wide token names no worker: --name (default the host name) is used.
 */
async function remoteName(jobs: RemoteWorkerJobs, o: WorkerOptions, nameChosen: boolean): Promise<string> {
  const tokenName = await jobs.whoami();
  if (tokenName === null) return o.name;
  if (nameChosen && o.name !== tokenName) {
    throw new Error(
      `this worker's token belongs to worker "${tokenName}", but --name (or RENDERBRIDGE_WORKER_NAME) says ` +
        `"${o.name}": drop --name (the token names the worker), or use the token created for "${o.name}"`,
    );
  }
  return tokenName;
}

/**
 * Ports of a worker on another machine: job state through the service; tasks and files through it too,
 * unless the operator shares them.
 */
async function remotePorts(
  o: WorkerOptions,
  config: ServiceConfig,
  nameChosen: boolean,
): Promise<{ ports: WorkerPorts; name: string; close(): Promise<void> }> {
  const token = config.workerToken;
  if (!token)
    throw new Error(
      "set RENDERBRIDGE_WORKER_TOKEN to this worker's token: create it on the service with renderbridge " +
        'admin create-worker-token --name NAME',
    );
  const jobs = new RemoteWorkerJobs({ serviceUrls: o.serviceUrl, token });
  const name = await remoteName(jobs, o, nameChosen);
  // The queue: shared directly when given (Redis, or the database's queue table), else through the
  // service's worker API, so the machine holds no queue credential.
  let queue: TaskQueue;
  let closeState = async () => undefined as void;
  if (config.redisUrl)
    queue = await openQueue(config, undefined, (err) =>
      console.error(`renderbridge worker: task queue: ${err.message}`),
    );
  else if (config.databaseUrl) {
    const state = await openState(config);
    queue = state.queue;
    closeState = state.close;
  } else queue = new RemoteTaskQueue({ serviceUrls: o.serviceUrl, token });
  // Files: straight to S3 with bucket keys when the operator gives them (the machine is then in
  // the operator's trust zone), else through the service, which signs each job's transfers only.
  const s3 = config.s3 ? await openS3(config.s3) : undefined;
  let storage: ObjectStorage;
  if (s3) storage = s3;
  else {
    const remote = new RemoteWorkerStorage({
      serviceUrls: o.serviceUrl,
      token,
      spoolDir: path.join(config.dataDir, 'spool'),
    });
    await remote.ready();
    storage = remote;
  }
  return {
    name,
    ports: {
      jobs: jobs satisfies WorkerJobStore,
      queue,
      storage,
      onCompleted: (rec) => jobs.completed(rec),
      registry: new RemoteWorkerReporter({ serviceUrls: o.serviceUrl, token }),
      farm: new RemoteFarm({ serviceUrls: o.serviceUrl, token }),
      frameStats: new RemoteFrameStats({ serviceUrls: o.serviceUrl, token }),
    },
    close: async () => {
      if (config.redisUrl) await queue.close();
      await closeState();
      s3?.close();
    },
  };
}

/**
 * `renderbridge worker`: render slots in their own process. With --service-url it runs on any
 * machine (job state, tasks and files through the service's worker API, or tasks and files shared directly when given);
 * without, it works beside a service on the same data folder and engines.
 */
export function registerWorkerCommand(program: Command): void {
  const cmd = program
    .command('worker')
    .description('Run render slots: beside a service (same --data-dir), or on another machine with --service-url')
    .option(
      '--data-dir <dir>',
      `the service's data folder (same machine; default: ${DATA_DIR_DEFAULT}), or this worker's work folder ` +
        `with --service-url (default ./.renderbridge/worker)`,
    );
  addRenderOptions(addUnpackOptions(addEngineOptions(cmd)));
  // Last: the table adds only the settings the modules above did not (the worker process's own too).
  const defaults = { ...defaultConfig(), serviceUrls: [], workerName: hostname(), metricsHost: '127.0.0.1' };
  addSettingOptions(cmd, 'worker', defaults as unknown as Record<string, unknown>).action(async (o: WorkerOptions) => {
    const remote = o.serviceUrl.length > 0;
    const engines = engineConfig(o);
    const config = defaultConfig({
      ...engines,
      ...unpackConfig(o),
      ...renderConfig(o),
      ...tableConfig(cmd),
      ...(engines.s3 ? { s3: { ...engines.s3, ...s3Credentials(cmd) } } : {}),
      // Beside a service: its data folder, resolved exactly as the service resolves it.
      dataDir: remote ? (o.dataDir ?? path.join('.renderbridge', 'worker')) : resolveDataDir(o.dataDir).dir,
      workers: o.workers === 0 ? 'auto' : o.workers,
      blenderPaths: o.blender,
    });
    if (o.printConfig) {
      const own: Record<string, unknown> = {
        serviceUrls: o.serviceUrl,
        workerName: o.name,
        metricsPort: o.metricsPort,
        metricsHost: o.metricsHost,
      };
      process.stdout.write(formatEffectiveConfig(cmd, (key) => (key in own ? own[key] : configValue(config, key))));
      return;
    }
    const log = createLogger(config.logLevel, undefined, config.logFormat);
    const metrics: Metrics = createMetrics();
    let ports: WorkerPorts;
    let close: () => Promise<void>;
    if (remote) {
      const source = cmd.getOptionValueSource('name');
      let name: string;
      ({ ports, close, name } = await remotePorts(o, config, source !== undefined && source !== 'default'));
      o.name = name;
    } else {
      const stack = await openStack(config);
      ports = {
        ...stack.deps,
        registry: stack.workerRegistry,
        farm: stack.workerRegistry,
        onCompleted: async (rec) => void (await enqueueRenderComplete(stack.webhooks, rec.job)),
      };
      close = () => stack.close();
    }
    metrics.watchQueue(ports.queue);
    const worker = await startWorker({ ...ports, metrics }, config, log, {
      // Lease ids start with the worker's name: the service scopes a remote worker's token by them.
      runtime: {
        workerName: o.name,
        workerId: `${o.name}:${process.pid}`,
        leaseMs: o.leaseSeconds * 1000,
        // Through the service, each idle poll is a request against this worker's budget: poll less often.
        ...(ports.queue instanceof RemoteTaskQueue ? { pollMs: 1000 } : {}),
      },
      version: VERSION,
      // A remote worker's frames may be finalized on another machine: they are staged in storage.
      settings: { ...(o.chunkFrames ? { chunkFrames: o.chunkFrames } : {}), ...(remote ? { stageFrames: true } : {}) },
    });
    if (!worker.runtime) {
      await close();
      throw new Error('no Blender found: install it (apt-get install blender) or pass --blender PATH');
    }
    const served =
      o.metricsPort !== undefined
        ? await startMetricsServer(metrics, {
            host: o.metricsHost,
            port: o.metricsPort,
            ...(config.metricsToken ? { token: config.metricsToken } : {}),
          })
        : undefined;
    console.error(
      `renderbridge worker ${o.name}: ${worker.slots.map((s) => s.id).join(', ')} with Blender ` +
        `${worker.builds.map((b) => b.version.text).join(', ')}`,
    );
    console.error(remote ? `  reporting to ${o.serviceUrl.join(', ')}` : `  beside the service on ${config.dataDir}`);
    if (remote)
      console.error(
        config.s3
          ? `  files: S3 bucket ${config.s3.bucket}, with this machine's credentials`
          : '  files: on URLs the service signs per job (no bucket key on this machine)',
      );
    if (served) console.error(`  metrics: ${served.url}`);
    const stop = () =>
      void worker
        .stop()
        .then(() => served?.close())
        .then(close)
        .then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
