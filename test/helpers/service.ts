// Starts the real reference service (SQLite, files, real HTTP on a free port) in a temp folder.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { defaultConfig, type ServiceConfig } from '../../service/config.js';
import { createApiKey } from '../../service/domain/api-keys.js';
import { openKeyStore } from '../../service/local-stack.js';
import { createLogger, startService, type RunningService, type StartOptions } from '../../service/server.js';
import type { WorkerTuning } from '../../service/worker/start.js';

export interface TestService {
  baseUrl: string;
  origin: string;
  apiKey: string;
  workspaceId: string;
  dataDir: string;
  service: RunningService;
  /** Every log line the service wrote, for checks that secrets never appear. */
  logs: string[];
  createApiKey(workspaceName: string): Promise<string>;
  /** Stops the service but keeps its data folder (for restart tests). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

/**
 * API tests play the worker themselves (moving jobs through the ports), so the in-process worker
 * is off unless a test asks for it with `workers`.
 */
export async function startTestService(
  options: Partial<ServiceConfig> & { dataDir?: string; worker?: WorkerTuning; webhooks?: StartOptions['webhooks'] } = {},
): Promise<TestService> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'rb-svc-')));
  const { worker, webhooks, ...rest } = options;
  const config = defaultConfig({ port: 0, logLevel: 'info', workers: 0, ...rest, dataDir });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const service = await startService(config, {
    logger: createLogger(config.logLevel, sink),
    ...(worker ? { worker } : {}),
    ...(webhooks ? { webhooks } : {}),
  });
  // A second connection to the same SQLite file, as `renderbridge admin` would open.
  const store = await openKeyStore(dataDir);
  const first = await createApiKey(store.keys, { workspace: 'studio', label: 'test' });
  const mk = async (ws: string) => (await createApiKey(store.keys, { workspace: ws, label: 'test' })).key;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await service.close();
    await store.close();
  };
  return {
    baseUrl: service.baseUrl,
    origin: service.origin,
    apiKey: first.key,
    workspaceId: first.record.workspaceId,
    dataDir,
    service,
    logs,
    createApiKey: mk,
    stop,
    close: async () => {
      await stop();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
